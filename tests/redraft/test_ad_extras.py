"""fwd_and_bwd against vjp, float0, and the checkpoint policies."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def layer(x, w):
    return jnp.tanh(x @ w)


X = jnp.ones((2, 3))
W = jnp.arange(6.0).reshape(3, 2) / 10
CT = jnp.asarray(np.float32([[1.0, -2.0], [0.5, 3.0]]))


@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_match_vjp(jitted):
    fwd, bwd = redraft.fwd_and_bwd(layer, argnums=(0, 1), jitted=jitted)
    y, residuals = fwd(X, W)
    np.testing.assert_allclose(np.asarray(y), np.asarray(layer(X, W)), rtol=1e-6)
    cx, cw = bwd(residuals, CT)
    ex, ew = redraft.vjp(layer, X, W)[1](CT)
    np.testing.assert_allclose(np.asarray(cx), np.asarray(ex), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(cw), np.asarray(ew), rtol=1e-6)


def test_fwd_and_bwd_single_argnum_and_aux():
    fwd, bwd = redraft.fwd_and_bwd(lambda x, w: (layer(x, w), jnp.sum(w)), argnums=1,
                                   has_aux=True, jitted=False)
    y, residuals, aux = fwd(X, W)
    assert float(aux) == pytest.approx(1.5)
    np.testing.assert_allclose(np.asarray(bwd(residuals, CT)),
                               np.asarray(redraft.vjp(layer, X, W)[1](CT)[1]), rtol=1e-6)


def test_float0_is_an_empty_structured_dtype():
    assert redraft.float0.itemsize == 0 and redraft.float0.names == ("float0",)
    assert np.zeros(3, redraft.float0).nbytes == 0


def test_checkpoint_policies_are_predicates():
    p = redraft.checkpoint_policies
    assert p.everything_saveable("sin") and not p.nothing_saveable("sin")
    assert p.dots_saveable("dot_general") and not p.dots_saveable("sin")
    assert p.save_only_these_names("h")("name", name="h")
    assert not p.save_anything_except_these_names("h")("name", name="h")
    both = p.save_from_both_policies(p.nothing_saveable, p.dots_saveable)
    assert both("dot_general") and not both("exp")
    f = redraft.checkpoint(lambda x: jnp.sin(x) ** 2, policy=p.dots_saveable)
    assert float(redraft.grad(f)(0.5)) == pytest.approx(np.sin(1.0), rel=1e-6)
