"""Every function of vmap_catalogue.py, batched by vmap, equals a Python loop over its
examples followed by a stack (and so does the jitted batched function)."""
import numpy as np
import pytest
from redraft.runtime.pytree import tree_flatten
from vmap_catalogue import CASES, loop_reference

from redraft import jit, vmap


def assert_trees_close(got, want, rtol):
    got_leaves, got_def = tree_flatten(got)
    want_leaves, want_def = tree_flatten(want)
    assert got_def == want_def, (got_def, want_def)
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w), (np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_vmap_matches_loop_and_stack(case):
    batched = vmap(case.fn, case.in_axes, case.out_axes)
    got = batched(*case.args, **case.kwargs)
    want = loop_reference(case.fn, case.args, case.in_axes, case.out_axes, case.kwargs)
    assert_trees_close(got, want, case.rtol)


# Under jit, vmap is read as Core, where a keyword argument cannot be told from a default
# (defaults are unmapped), so that one case is left to the eager test.
JIT_CASES = [c for c in CASES if not c.kwargs]


@pytest.mark.parametrize("case", JIT_CASES, ids=lambda c: c.name)
def test_jit_of_vmap_matches_loop(case):
    batched = jit(vmap(case.fn, case.in_axes, case.out_axes))
    got = batched(*case.args, **case.kwargs)
    want = loop_reference(case.fn, case.args, case.in_axes, case.out_axes, case.kwargs)
    assert_trees_close(got, want, case.rtol)


def test_catalogue_is_large_enough():
    assert len(CASES) >= 40
