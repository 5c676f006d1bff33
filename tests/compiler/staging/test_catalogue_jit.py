"""Every function of the autodiff catalogue, and its gradient, compiled with jit and compared
with eager execution. The only functions jit cannot compile are gradients through a while
loop on a run-time value (their tapes would need a run-time length): those are listed."""
import pathlib
import sys

import numpy as np
import pytest

import redraft
from redraft.runtime.pytree import tree_flatten

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "transforms"))
from catalogue import CATALOGUE, arguments, entry_id  # noqa: E402

ENTRIES = [e for e in CATALOGUE if "xfail" not in e[2]]
WHILE_ON_RUN_TIME_VALUES = {"while_halving", "while_vector", "while_newton_sqrt",
                            "uses_while_loop"}


def _close(actual, expected, what: str) -> None:
    got, want = tree_flatten(actual)[0], tree_flatten(expected)[0]
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=2e-5, atol=1e-5, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_jit_matches_eager(entry):
    fn, args = entry[0], arguments(entry)
    with np.errstate(all="ignore"):
        _close(redraft.jit(fn)(*args), fn(*args), f"jit({fn.__name__})")


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_jit_of_grad_matches_eager_grad(entry):
    fn, args = entry[0], arguments(entry)
    with np.errstate(all="ignore"):
        out = fn(*args)
        scalar = isinstance(out, (redraft.Array, float)) and np.shape(out) == ()
        if not scalar or not all(np.asarray(a).dtype.kind == "f"
                                 for a in tree_flatten(args)[0]):
            pytest.skip("grad needs a scalar output and float inputs")
        g = redraft.grad(fn, argnums=tuple(range(len(args))))
        expected = g(*args)
        if fn.__name__ in WHILE_ON_RUN_TIME_VALUES:
            with pytest.raises(TypeError, match="while loop on a run-time condition"):
                redraft.jit(g)(*args)
            return
        _close(redraft.jit(g)(*args), expected, f"jit(grad({fn.__name__}))")
