"""Programs the fuzzer of issue 8 found failing in transforms of Core: slices built from a
loop index under Hessian-vector products, None values carried through vmap (of grad), and an
`if` on a batched value whose branches give a name different shapes."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.test_util import numerical_grad as fd_grad


def close(actual, expected, rtol=1e-4, atol=1e-4):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


X = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], np.float32)


def windows(x):
    s = 0.0
    for i in range(3):
        s = s + jnp.sum(x[i:i + 2] ** 3)
    return s


def windows_np(x):
    return sum(np.sum(x[i:i + 2] ** 3) for i in range(3))


def test_hessian_vector_product_of_slices_from_a_loop_index():
    """The reverse pass restores the index from its tape: the slice made from it is not
    differentiable, whatever the tape's activity says."""
    v = np.linspace(1.0, -1.0, 6).astype(np.float32)
    expected = fd_grad(lambda x: fd_grad(windows_np, x, 1e-4) @ v, X, 1e-4)
    close(redraft.jvp(redraft.grad(windows), (X,), (v,))[1], expected, rtol=1e-3, atol=1e-3)
    close(redraft.jvp(redraft.jit(redraft.grad(windows)), (X,), (v,))[1], expected,
          rtol=1e-3, atol=1e-3)
    close(redraft.jit(redraft.grad(windows))(X), fd_grad(windows_np, X))


def first_then_accumulate(x):
    acc = None
    for i in range(3):
        if acc is None:
            acc = x * 1.0
        else:
            acc = acc + jnp.sin(x)
    return jnp.sum(acc)


def first_then_accumulate_np(x):
    return np.sum(x + 2 * np.sin(x))


def test_none_carried_into_a_loop_under_vmap_and_vmap_of_grad():
    xs = np.array([[0.1, 0.5, -0.3], [1.0, -2.0, 0.25]], np.float32)
    close(redraft.vmap(first_then_accumulate)(xs), [first_then_accumulate_np(x) for x in xs])
    expected = [fd_grad(first_then_accumulate_np, x) for x in xs]
    close(redraft.vmap(redraft.grad(first_then_accumulate))(xs), expected)
    close(redraft.jit(redraft.vmap(redraft.grad(first_then_accumulate)))(xs), expected)


def shape_changes(x):
    if jnp.sum(x) > 0:
        y = x
    else:
        y = x[:1]
    return jnp.sum(y * 2)


def rank_changes(x):
    y = 0.0
    if jnp.sum(x) > 0:
        y = x
    return jnp.sum(y * 2)


@pytest.mark.parametrize("fn", [shape_changes, rank_changes])
def test_vmap_of_an_if_whose_branches_give_a_name_two_shapes_raises(fn):
    """jit refuses it; vmap used to broadcast (1,) or () against (3,) silently."""
    xs = np.array([[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]], np.float32)
    line = fn.__code__.co_firstlineno + (1 if fn is shape_changes else 2)
    for transform in (redraft.vmap(fn), redraft.jit(redraft.vmap(fn)),
                      redraft.vmap(redraft.grad(fn))):
        with pytest.raises(TypeError, match="`y` has shape") as info:
            transform(xs)
        assert f"{__file__}:{line}:" in str(info.value)
    with pytest.raises(Exception, match="`y` has shape"):
        redraft.jit(fn)(xs[0])


def same_shape_branches(x):
    if jnp.sum(x) > 0:
        y = x * 2.0
    else:
        y = jnp.sin(x)
    return jnp.sum(y)


def test_vmap_of_an_if_with_one_shape_still_selects_per_example():
    xs = np.array([[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]], np.float32)
    close(redraft.vmap(same_shape_branches)(xs), [12.0, np.sum(np.sin(xs[1]))])


def pair_on_one_path(x):
    if jnp.sum(x) > 0.0:
        pair = (x * 2.0, jnp.sum(x))
        z, b = pair
    y = jnp.sin(x)
    if jnp.sum(x) > 1.0:
        pair = (y, y)
    return jnp.sum(y)


def test_vmap_selects_a_tuple_set_on_one_path():
    """`pair` is merged between the two ifs; on the path where neither set it, its
    placeholder is None, and the batched select of a tuple took None for a structure."""
    xs = np.array([[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0], [0.2, 0.1, 0.3]], np.float32)
    close(redraft.vmap(pair_on_one_path)(xs), np.sum(np.sin(xs), axis=1), rtol=1e-5)
    close(redraft.vmap(redraft.grad(pair_on_one_path))(xs), np.cos(xs), rtol=1e-5)
