"""The complex-valued special functions: the Faddeeva function wofz and the spherical
harmonics sph_harm_y.

wofz(z) = exp(-z^2) erfc(-iz) by Weideman's rational expansion (SIAM J. Numer. Anal. 31,
1994) with 32 terms, whose coefficients are computed here by an FFT when the module loads,
for Im z >= 0, and w(z) = 2 exp(-z^2) - w(-z) below the real axis. sph_harm_y by the
recurrences of the fully normalised associated Legendre functions (with the Condon-Shortley
phase, as scipy), for every degree up to n_max, each element then picking its own (n, m).
"""
from __future__ import annotations

import math

import numpy as np

import redraft.numpy as jnp
from redraft.runtime.array import Array


def _weideman_coefficients(n: int) -> tuple[float, list[float]]:
    """(L, polynomial coefficients, highest power first) of Weideman's expansion."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    length = math.sqrt(n / math.sqrt(2))
    t = length * np.tan(k * np.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (length ** 2 + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return length, np.flipud(a[1:n + 1]).tolist()


_L, _COEFFICIENTS = _weideman_coefficients(32)


def _w_upper(z: Array) -> Array:
    """w(z) for Im z >= 0."""
    iz = z * 1j
    denominator = _L - iz
    ratio = (_L + iz) / denominator
    p = jnp.zeros_like(z)
    for c in _COEFFICIENTS:
        p = p * ratio + c
    return 2 * p / (denominator * denominator) + (1 / math.sqrt(math.pi)) / denominator


def wofz(z) -> Array:
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), complex64 for real or complex64
    input (complex128 for complex128)."""
    v = jnp.asarray(z)
    if v.dtype.kind != "c":
        v = v.astype(jnp.complex128 if v.dtype == np.float64 else jnp.complex64)
    upper = jnp.imag(v) >= 0
    reflected = jnp.where(upper, v, -v)
    w = _w_upper(reflected)
    return jnp.where(upper, w, 2 * jnp.exp(-v * v) - w)


def sph_harm_y(n, m, theta, phi, diff_n: int | None = None, n_max: int | None = None) -> Array:
    """The spherical harmonic Y_n^m(theta, phi) = N P_n^m(cos theta) exp(i m phi) (theta the
    colatitude), for n >= 0 and |m| <= n; degrees above n_max (max(n) by default, which
    needs concrete n) are clipped to n_max, as in JAX."""
    if diff_n:
        raise NotImplementedError("sph_harm_y: derivatives (diff_n) are not supported, as in "
                                  "JAX")
    n_arr, m_arr = jnp.asarray(n), jnp.asarray(m)
    if n_arr.dtype.kind not in "iu" or m_arr.dtype.kind not in "iu":
        raise TypeError("sph_harm_y needs integer n and m")
    if n_max is None:
        n_max = int(np.max(np.asarray(n_arr)))
    n_max = int(n_max)
    th = jnp.asarray(theta)
    th = th if th.dtype.kind == "f" else th.astype(jnp.float32)
    ph = jnp.asarray(phi).astype(th.dtype)
    n_arr = jnp.minimum(n_arr, n_max)
    shape = np.broadcast_shapes(n_arr.shape, m_arr.shape, th.shape, ph.shape)
    n_b = jnp.broadcast_to(n_arr, shape)
    m_b = jnp.broadcast_to(m_arr, shape)
    x, s = jnp.cos(jnp.broadcast_to(th, shape)), jnp.sin(jnp.broadcast_to(th, shape))
    m_abs = jnp.abs(m_b)
    legendre = jnp.zeros(shape, th.dtype)
    diagonal = jnp.full(shape, 1 / math.sqrt(4 * math.pi), th.dtype)   # P_m^m, normalised
    for order in range(n_max + 1):
        if order > 0:
            diagonal = -math.sqrt((2 * order + 1) / (2 * order)) * s * diagonal
        previous, current = jnp.zeros_like(diagonal), diagonal
        for degree in range(order, n_max + 1):
            if degree == order + 1:
                previous, current = current, math.sqrt(2 * order + 3) * x * current
            elif degree > order + 1:
                a = math.sqrt((4 * degree ** 2 - 1) / (degree ** 2 - order ** 2))
                b = math.sqrt(((degree - 1) ** 2 - order ** 2) / (4 * (degree - 1) ** 2 - 1))
                previous, current = current, a * (x * current - b * previous)
            legendre = jnp.where((n_b == degree) & (m_abs == order), current, legendre)
    sign = jnp.where((m_b < 0) & (jnp.remainder(m_abs, 2) == 1), -1.0, 1.0).astype(th.dtype)
    angle = m_b.astype(th.dtype) * jnp.broadcast_to(ph, shape)
    complex_dtype = jnp.complex128 if th.dtype == np.float64 else jnp.complex64
    phase = (jnp.cos(angle) + 1j * jnp.sin(angle)).astype(complex_dtype)
    return (sign * legendre).astype(complex_dtype) * phase
