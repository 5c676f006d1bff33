"""`ys.append(y)` on a local list is a new binding of `ys` in Core: every transform sees the
appended value (it once gave a silently zero gradient); other in-place methods are refused."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.compiler.frontend.normalize import UnsupportedSyntaxError


def stacked_sines(x):
    ys = []
    for i in range(3):
        ys.append(jnp.sin(x * i))
    return jnp.sum(jnp.stack(ys) ** 2)


def stacked_sines_grad64(x):
    x = np.asarray(x, np.float64)
    return sum(2 * np.sin(x * i) * np.cos(x * i) * i for i in range(3))


X = np.array([0.3, 0.5, -1.2], np.float32)


@pytest.mark.parametrize("transform", ["eager", "jit"])
def test_grad_through_appended_list(transform):
    g = redraft.grad(stacked_sines)
    g = redraft.jit(g) if transform == "jit" else g
    np.testing.assert_allclose(g(X), stacked_sines_grad64(X), rtol=1e-5, atol=1e-6)


def test_jvp_and_vmap_through_appended_list():
    v = np.array([1.0, -2.0, 0.5], np.float32)
    _, tangent = redraft.jvp(stacked_sines, (X,), (v,))
    np.testing.assert_allclose(tangent, stacked_sines_grad64(X) @ v, rtol=1e-5)
    rows = np.stack([X, 2 * X])
    batched = redraft.vmap(redraft.grad(stacked_sines))(rows)
    np.testing.assert_allclose(batched, [stacked_sines_grad64(r) for r in rows], rtol=1e-5,
                               atol=1e-6)


def test_in_place_methods_that_hide_their_data_flow_are_refused_at_the_users_line():
    def sort(x):
        ys = [x, 2 * x]
        ys.sort()
        return ys[0]

    with pytest.raises(UnsupportedSyntaxError, match=r"test_list_mutation.py:\d+: `ys.sort"):
        redraft.grad(sort)(1.0)
