"""check_grads: test a function's derivatives against finite differences, to any order.

Forward mode is compared with central differences along a random direction; reverse mode
with forward mode through the dot-product identity <ct, J t> == <J^T ct, t>. Order 2 and up
repeat the checks on the generated derivative functions themselves (which redraft can
transform again), so a Hessian is checked the same way a gradient is.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from redraft.compiler.transforms.calls import callees
from redraft.runtime.convert import as_array
from redraft.runtime.pytree import tree_flatten, tree_map

DEFAULT_EPS = 1e-3


def numerical_grad(f: Callable[[np.ndarray], float], x, eps: float = 1e-6) -> np.ndarray:
    """The gradient of scalar `f` at `x` by float64 central differences, one coordinate at a
    time: the independent reference a transform's gradient is held against."""
    x = np.array(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def _leaves64(tree) -> list[np.ndarray]:
    return [np.asarray(v, np.float64) for v in tree_flatten(tree)[0]]


def _random_like(tree, rng: np.random.Generator):
    return tree_map(lambda v: rng.standard_normal(np.shape(v)).astype(np.float32), tree)


def _to_array(v):
    """NumPy leaves become redraft arrays (f sees what the derivative functions see)."""
    return as_array(v) if isinstance(v, (np.ndarray, np.generic)) else v


def _inner(a, b) -> float:
    return float(sum(np.vdot(x, y) for x, y in zip(_leaves64(a), _leaves64(b))))


def _axpy(alpha: float, x, y):
    """y + alpha * x, leaf by leaf, in float32 like the inputs, as redraft arrays (so that
    the function may use their methods, such as x.at[i].set(v))."""
    return tree_map(lambda u, v: as_array((np.asarray(v, np.float64) + alpha * np.asarray(
        u, np.float64)).astype(np.float32)), x, y)


def _assert_close(actual, expected, atol: float, rtol: float, what: str) -> None:
    a_leaves, e_leaves = _leaves64(actual), _leaves64(expected)
    if len(a_leaves) != len(e_leaves):
        raise AssertionError(f"{what}: {len(a_leaves)} leaves, expected {len(e_leaves)}")
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(a, e, atol=atol, rtol=rtol, err_msg=what)


def check_jvp(f: Callable, args: tuple, atol: float, rtol: float, eps: float,
              rng: np.random.Generator) -> None:
    """jvp(f) along a random direction against a central difference."""
    from redraft.transforms import jvp
    tangents = _random_like(args, rng)
    _, out_dot = jvp(f, args, tangents)
    plus = f(*_axpy(eps, tangents, args))
    minus = f(*_axpy(-eps, tangents, args))
    numeric = tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64))
                       / (2 * eps), plus, minus)
    _assert_close(out_dot, numeric, atol, rtol, f"jvp of {getattr(f, '__name__', f)}")


def check_vjp(f: Callable, args: tuple, atol: float, rtol: float,
              rng: np.random.Generator) -> None:
    """<ct, J t> (forward mode) against <J^T ct, t> (reverse mode)."""
    from redraft.transforms import jvp, vjp
    tangents = _random_like(args, rng)
    out, out_dot = jvp(f, args, tangents)
    ct = _random_like(out, rng)
    _, vjp_fun = vjp(f, *args)
    bars = vjp_fun(ct)
    forward, reverse = _inner(ct, out_dot), _inner(bars, tangents)
    scale = max(1.0, abs(forward))
    if abs(forward - reverse) > atol * scale + rtol * abs(forward):
        raise AssertionError(f"vjp of {getattr(f, '__name__', f)}: <ct, J t> = {forward} but "
                             f"<J^T ct, t> = {reverse}")


def check_grads(f: Callable, args: Sequence, order: int, modes: Sequence[str] = ("fwd", "rev"),
                atol: float = 1e-2, rtol: float = 1e-2, eps: float = DEFAULT_EPS,
                seed: int = 0) -> None:
    """Check f's derivatives up to `order` in the given modes; raises AssertionError."""
    rng = np.random.default_rng(seed)
    args = tree_map(_to_array, tuple(args))
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"unknown mode {mode!r}: use 'fwd' and/or 'rev'")
    _check(f, args, order, tuple(modes), atol, rtol, eps, rng)


def _check(f, args, order, modes, atol, rtol, eps, rng) -> None:
    mask = tuple(True for _ in args)
    if "fwd" in modes:
        check_jvp(f, args, atol, rtol, eps, rng)
        if order > 1:
            f_jvp = callees.jvp_of(f, mask)
            _check(f_jvp, args + _random_like(args, rng), order - 1, modes, atol, rtol, eps, rng)
    if "rev" in modes:
        check_vjp(f, args, atol, rtol, rng)
        if order > 1:
            f_bwd = callees.vjp_of(f, mask, "bwd", single=False)
            out = f(*args)
            _check(f_bwd, args + (_random_like(out, rng),), order - 1, modes, atol, rtol, eps,
                   rng)


__all__ = ["check_grads", "check_jvp", "check_vjp"]
