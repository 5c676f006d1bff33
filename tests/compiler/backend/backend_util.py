"""Run a function three ways (compiled by the LLVM backend, compiled but interpreted, eager)
and check that they agree."""
from __future__ import annotations

import os

import numpy as np

import redraft
from redraft.tree_util import tree_leaves


def compiled(fn, *args, backend: str | None = None, static_argnums=()):
    """(results, backend used) of jit(fn)(*args), with REDRAFT_BACKEND=backend if given."""
    saved = os.environ.get("REDRAFT_BACKEND")
    if backend is not None:
        os.environ["REDRAFT_BACKEND"] = backend
    try:
        jitted = redraft.jit(fn, static_argnums=static_argnums)
        out = jitted(*args)
        used = next(iter(jitted._cache.values())).backend
    finally:
        if saved is None:
            os.environ.pop("REDRAFT_BACKEND", None)
        else:
            os.environ["REDRAFT_BACKEND"] = saved
    return out, used


def check(fn, *args, rtol: float = 1e-6, atol: float = 1e-6, eager: bool = True,
          expect: str = "llvm", static_argnums=()):
    """Assert the LLVM-compiled fn agrees with the interpreter (and eager mode); returns the
    compiled results as NumPy arrays."""
    got, used = compiled(fn, *args, static_argnums=static_argnums)
    assert used == expect, f"expected the {expect} backend, got {used}"
    want, used_ref = compiled(fn, *args, backend="interpret", static_argnums=static_argnums)
    assert used_ref == "interpret"
    references = [want]
    if eager:
        import redraft.numpy as jnp
        from redraft.tree_util import tree_map
        arrays = tree_map(lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a, args)
        references.append(fn(*arrays))
    got_leaves = [np.asarray(x) for x in tree_leaves(got)]
    for n, ref in enumerate(references):
        ref_leaves = [np.asarray(x) for x in tree_leaves(ref)]
        assert len(got_leaves) == len(ref_leaves)
        for g, w in zip(got_leaves, ref_leaves):
            assert g.shape == w.shape, (g.shape, w.shape)
            if n == 0:  # eager mode may hand back Python scalars: dtypes vs the interpreter
                assert g.dtype == w.dtype, (g.dtype, w.dtype)
            if g.dtype.kind in "biu":
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return got_leaves


def sample(shape, dtype, seed: int = 0, low: float = -3.0, high: float = 3.0,
           nonzero: bool = False) -> np.ndarray:
    """Random test data of `dtype` (integers in a small range, bools half true)."""
    rs = np.random.RandomState(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rs.rand(*shape) < 0.5)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -20
        x = np.asarray(rs.randint(lo, 21, size=shape)).astype(dtype)
        if nonzero:
            x[x == 0] = 3
        return x
    x = np.asarray(low + (high - low) * rs.rand(*shape)).astype(dtype)
    return x


def build_ir(name: str, avals, body):
    """An IR function built directly (for dtypes jit canonicalises away, such as float64):
    `body(builder, params)` stages equations and returns the results."""
    from redraft.compiler.ir.build import Builder
    builder = Builder(name)
    params = [builder.new_param(a) for a in avals]
    return builder.finish(list(body(builder, params)))


def check_ir(fn, args, rtol: float = 1e-13, atol: float = 0.0):
    """compile_ir(fn) exists and agrees with the reference interpreter on `args`."""
    from redraft.compiler.backend import interpret
    from redraft.compiler.backend.llvm import compile_ir
    runner = compile_ir(fn)
    assert runner is not None, "the LLVM backend declined the function"
    got = runner(list(args))
    want = interpret.run(fn, list(args))
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return got
