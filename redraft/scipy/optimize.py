"""redraft.scipy.optimize: minimize(fun, x0, method='BFGS'), as jax.scipy.optimize offers.

BFGS (Nocedal & Wright, Algorithm 6.1) with a line search for the strong Wolfe conditions
(Algorithms 3.5 and 3.6: bracketing, then zooming by cubic interpolation with a bisection
guard). The objective and its gradient come from redraft.value_and_grad, compiled once with
redraft.jit; the iteration itself is host Python over scalars, so minimize is called eagerly
(inside a jitted function the convergence tests would need values the compiled code does
not yet have, and minimize says so).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from redraft.runtime.array import Array

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """The outcome of minimize, with JAX's fields: status 0 converged, 1 the iteration limit
    was reached, 3 the line search failed, 5 the objective or gradient became non-finite."""
    x: Array
    success: Any
    status: Any
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: Any
    njev: Any
    nit: Any


class _Objective:
    """f and its gradient at float64 host points, counting evaluations."""

    def __init__(self, fun: Callable, args: tuple, dtype) -> None:
        import redraft
        self.dtype = dtype
        self.value_and_grad = redraft.jit(redraft.value_and_grad(fun))
        self.args = args
        self.count = 0

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        import redraft.numpy as jnp
        self.count += 1
        value, grad = self.value_and_grad(jnp.asarray(x.astype(self.dtype)), *self.args)
        return float(value), np.asarray(grad, np.float64)


def _cubic_minimum(a, fa, da, b, fb, db) -> float | None:
    """The minimiser of the cubic through (a, fa, da) and (b, fb, db), or None."""
    d1 = da + db - 3 * (fa - fb) / (a - b)
    radicand = d1 * d1 - da * db
    if radicand < 0:
        return None
    d2 = np.copysign(np.sqrt(radicand), b - a)
    denominator = db - da + 2 * d2
    if denominator == 0:
        return None
    return b - (b - a) * (db + d2 - d1) / denominator


def _zoom(phi, lo, hi, f0, d0, c1, c2, maxiter):
    """Algorithm 3.6: a step in [lo, hi] (each an (alpha, f, df) triple) meeting strong
    Wolfe, or None."""
    for _ in range(maxiter):
        trial = _cubic_minimum(*lo, *hi)
        left, right = min(lo[0], hi[0]), max(lo[0], hi[0])
        margin = 0.1 * (right - left)
        if trial is None or not left + margin <= trial <= right - margin:
            trial = 0.5 * (lo[0] + hi[0])
        f, df, g = phi(trial)
        if f > f0 + c1 * trial * d0 or f >= lo[1]:
            hi = (trial, f, df)
        else:
            if abs(df) <= -c2 * d0:
                return trial, f, g
            if df * (hi[0] - lo[0]) >= 0:
                hi = lo
            lo = (trial, f, df)
    return None


def _line_search(objective, x, p, f0, g0, maxiter: int, c1=1e-4, c2=0.9):
    """Algorithm 3.5: (alpha, f, g) along direction p meeting strong Wolfe, or None."""
    d0 = float(g0 @ p)

    def phi(alpha):
        f, g = objective(x + alpha * p)
        return f, float(g @ p), g

    prev = (0.0, f0, d0)
    alpha = 1.0
    for i in range(maxiter):
        f, df, g = phi(alpha)
        if not np.isfinite(f):
            alpha *= 0.5
            continue
        if f > f0 + c1 * alpha * d0 or (i > 0 and f >= prev[1]):
            return _zoom(phi, prev, (alpha, f, df), f0, d0, c1, c2, maxiter)
        if abs(df) <= -c2 * d0:
            return alpha, f, g
        if df >= 0:
            return _zoom(phi, (alpha, f, df), prev, f0, d0, c1, c2, maxiter)
        prev = (alpha, f, df)
        alpha *= 2.0
    return None


def _bfgs(fun: Callable, x0, args: tuple, options: Mapping[str, Any]) -> OptimizeResults:
    import redraft.numpy as jnp
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be 1-dimensional, got shape {x0.shape}")
    dtype = x0.dtype if x0.dtype.kind == "f" else np.dtype(np.float32)
    n = x0.shape[0]
    maxiter = options.get("maxiter") or 200 * n
    gtol = options.get("gtol", 1e-5)
    norm = options.get("norm", np.inf)
    ls_maxiter = options.get("line_search_maxiter", 10)
    objective = _Objective(fun, args, dtype)
    x = np.asarray(x0, np.float64)
    f, g = objective(x)
    h = np.eye(n)
    status, nit = 1, 0
    for nit in range(1, maxiter + 1):
        if not np.isfinite(f) or not np.all(np.isfinite(g)):
            status = 5
            break
        if np.linalg.norm(g, ord=norm) < gtol:
            status, nit = 0, nit - 1
            break
        p = -h @ g
        found = _line_search(objective, x, p, f, g, ls_maxiter)
        if found is None:
            status = 3
            break
        alpha, f_new, g_new = found
        s = alpha * p
        y = g_new - g
        x, f, g = x + s, f_new, g_new
        sy = float(s @ y)
        if sy > 0:   # the curvature condition keeps h positive definite
            rho = 1.0 / sy
            v = np.eye(n) - rho * np.outer(s, y)
            h = v @ h @ v.T + rho * np.outer(s, s)
    if status == 1 and np.linalg.norm(g, ord=norm) < gtol:
        status = 0
    return OptimizeResults(
        x=jnp.asarray(x.astype(dtype)), success=jnp.asarray(status == 0),
        # the counts are weakly typed ints, as JAX's (Python ints through its while loop)
        status=jnp.asarray(int(status)), fun=jnp.asarray(np.asarray(f, dtype)),
        jac=jnp.asarray(g.astype(dtype)), hess_inv=jnp.asarray(h.astype(dtype)),
        nfev=jnp.asarray(int(objective.count)), njev=jnp.asarray(int(objective.count)),
        nit=jnp.asarray(int(nit)))


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimise fun(x, *args) over the 1-D array x from x0; method 'BFGS' (as in JAX).
    options: maxiter (200 * size), gtol (1e-5; tol overrides it), norm (inf),
    line_search_maxiter (10)."""
    from redraft.runtime.staging_context import active_builder
    if active_builder() is not None:
        raise NotImplementedError(
            "minimize inside a compiled function: its iteration decides on values at each "
            "step; call it outside jit (the objective itself is compiled)")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"minimize: method must be 'BFGS', got {method!r}")
    options = dict(options or {})
    if tol is not None:
        options["gtol"] = tol
    return _bfgs(fun, x0, tuple(args), options)
