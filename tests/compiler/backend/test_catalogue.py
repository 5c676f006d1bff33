"""Every function of the transforms' catalogue, and its gradient, compiled by the LLVM
backend and by the reference interpreter: the two must agree (a function the backend
declines runs on the interpreter, which the count below keeps honest)."""
import pathlib
import sys

import numpy as np
import pytest
from backend_util import compiled
from redraft.runtime.pytree import tree_flatten

import redraft

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "transforms"))
from catalogue import CATALOGUE, arguments, entry_id

ENTRIES = [e for e in CATALOGUE if "xfail" not in e[2]]
BACKENDS_USED: dict[str, int] = {}


def _agree(fn, args, what):
    with np.errstate(all="ignore"):
        try:
            want, _ = compiled(fn, *args, backend="interpret")
        except Exception:  # noqa: BLE001 - staging cannot compile it at all (not the backend)
            return
        got, used = compiled(fn, *args)
    BACKENDS_USED[used] = BACKENDS_USED.get(used, 0) + 1
    got_leaves, want_leaves = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(got_leaves) == len(want_leaves), what
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=2e-5, atol=1e-6, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_catalogue_function_and_gradient(entry):
    fn, args = entry[0], arguments(entry)
    _agree(fn, args, "value")
    out = fn(*args)
    if len(tree_flatten(out)[0]) == 1 and np.shape(out) == ():
        _agree(redraft.grad(fn), args, "gradient")


def test_most_of_the_catalogue_compiles():
    if sum(BACKENDS_USED.values()) < len(ENTRIES):
        pytest.skip("run with the whole module")
    assert BACKENDS_USED.get("llvm", 0) >= 0.9 * sum(BACKENDS_USED.values()), BACKENDS_USED
