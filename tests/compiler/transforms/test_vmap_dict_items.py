"""vmap of functions that walk a dict of arrays as Python does: `sorted(d.items())`,
`d.keys()`, `d.values()`, zip of keys and values, `for k in d`, `max(d)`, `dict(pairs)`.
The keys are the same in every example: they stay Python strings and order the items once
for all examples, as in JAX, where they are never traced. Expected values are JAX 0.10.2's
for the same functions, stored here."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def _d():
    return {"b": jnp.arange(3.0), "a": jnp.ones(3) * 2}


def enumerate_sorted_items(d):
    return sum(v * i for i, (k, v) in enumerate(sorted(d.items())))


def plain_items(d):
    return sum(v * len(k) for k, v in d.items())


def sorted_keys(d):
    return sum(d[k] * i for i, k in enumerate(sorted(d.keys())))


def values(d):
    return sum(v * v for v in d.values())


def zip_keys_and_values(d):
    return sum(v * (k == "a") for k, v in zip(d.keys(), d.values()))


def zip_sorted_keys_and_their_values(d):
    ks = sorted(d)
    return sum(v * i for i, (k, v) in enumerate(zip(ks, [d[k] for k in ks])))


def for_k_in_d(d):
    s = 0.0
    for k in d:
        s = s + d[k] * (2.0 if k == "a" else 1.0)
    return s


def max_of_keys(d):
    return d[max(d)]


def reversed_items(d):
    return sorted(d.items(), reverse=True)[0][1]


def sorted_by_a_key_function(d):
    return sorted(d.items(), key=lambda kv: kv[0])[0][1] * 3


def items_with_an_unmapped_pair(d, c):
    pairs = sorted(list(d.items()) + [("c", c)])
    return sum(v * i for i, (k, v) in enumerate(pairs))


def named_pairs(x):
    pairs = [("t", x * 2), ("s", x)]
    return sum(v * i for i, (_, v) in enumerate(sorted(pairs)))


@pytest.mark.parametrize("fn, expected", [
    (enumerate_sorted_items, [0.0, 1.0, 2.0]),
    (plain_items, [2.0, 3.0, 4.0]),
    (sorted_keys, [0.0, 1.0, 2.0]),
    (values, [4.0, 5.0, 8.0]),
    (zip_keys_and_values, [2.0, 2.0, 2.0]),
    (zip_sorted_keys_and_their_values, [0.0, 1.0, 2.0]),
    (for_k_in_d, [4.0, 5.0, 6.0]),
    (max_of_keys, [0.0, 1.0, 2.0]),
    (reversed_items, [0.0, 1.0, 2.0]),
    (sorted_by_a_key_function, [6.0, 6.0, 6.0]),
])
def test_vmap_matches_jax(fn, expected):
    np.testing.assert_allclose(np.asarray(redraft.vmap(fn)(_d())), expected)


def test_unmapped_items_join_the_mapped_ones():
    got = redraft.vmap(items_with_an_unmapped_pair, in_axes=(0, None))(_d(), 5.0)
    np.testing.assert_allclose(np.asarray(got), [10.0, 11.0, 12.0])


def test_tuples_named_by_strings_are_ordered_by_their_names():
    np.testing.assert_allclose(np.asarray(redraft.vmap(named_pairs)(jnp.arange(3.0))),
                               [0.0, 2.0, 4.0])


def test_a_dict_built_from_sorted_items_keeps_its_keys():
    got = redraft.vmap(lambda d: dict(sorted((k, v * 2) for k, v in d.items())))(_d())
    assert list(got) == ["a", "b"]
    np.testing.assert_allclose(np.asarray(got["a"]), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(np.asarray(got["b"]), [0.0, 2.0, 4.0])
    comp = redraft.vmap(lambda d: {k + "_x": v * 2 for k, v in sorted(d.items())})(_d())
    assert list(comp) == ["a_x", "b_x"]


def weighted(d):
    return sum(jnp.sin(v) * (i + 1) for i, (k, v) in enumerate(sorted(d.items())))


def test_compositions_with_jit_grad_and_vmap():
    """jit(vmap), grad(vmap), vmap(grad) and vmap(vmap) agree with JAX."""
    d = _d()
    np.testing.assert_allclose(np.asarray(redraft.jit(redraft.vmap(enumerate_sorted_items))(d)),
                               [0.0, 1.0, 2.0])
    g = redraft.grad(lambda d: jnp.sum(redraft.vmap(weighted)(d)))(d)
    np.testing.assert_allclose(np.asarray(g["a"]), np.cos(2.0) * np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g["b"]), 2 * np.cos(np.arange(3.0)), rtol=1e-6)
    per_example = redraft.vmap(redraft.grad(weighted))({"b": jnp.arange(3.0),
                                                        "a": jnp.ones(3)})
    np.testing.assert_allclose(np.asarray(per_example["a"]), [0.5403] * 3, atol=1e-4)
    np.testing.assert_allclose(np.asarray(per_example["b"]), [2.0, 1.0806, -0.8323],
                               atol=1e-4)
    twice = redraft.vmap(redraft.vmap(enumerate_sorted_items))(
        {"b": jnp.ones((2, 3)), "a": jnp.ones((2, 3)) * 2})
    np.testing.assert_allclose(np.asarray(twice), np.ones((2, 3)))


def key_by_shape(d):
    return sorted(d.items(), key=lambda kv: -kv[1].shape[0])[0][1].sum()


def test_a_key_function_sees_one_example():
    """The key is batched with the items: `kv[1].shape` is one example's shape."""
    d = {"a": jnp.ones((3, 2)), "b": jnp.ones((3, 5)) * jnp.arange(3.0)[:, None]}
    np.testing.assert_allclose(np.asarray(redraft.vmap(key_by_shape)(d)), [0.0, 5.0, 10.0])


def tied_names(x):
    return sorted([("s", x), ("s", x * 2)])[0][1]


def test_items_whose_order_would_compare_arrays_are_refused():
    """Equal names leave the order to the arrays, which differ between examples: JAX raises
    TracerBoolConversionError; redraft says so too."""
    with pytest.raises(TypeError, match="differ from example to example"):
        redraft.vmap(tied_names)(jnp.arange(3.0))


def smaller_first(x):
    return sorted([x, 1.0 - x])[0]


def test_sorting_batched_numbers_still_sorts_each_example():
    np.testing.assert_allclose(np.asarray(redraft.vmap(smaller_first)(jnp.arange(3.0))),
                               [0.0, 0.0, -1.0])


@pytest.mark.parametrize("fn, expected", [
    (for_k_in_d, [4.0, 5.0, 6.0]),
    (max_of_keys, [0.0, 1.0, 2.0]),
    (zip_sorted_keys_and_their_values, [0.0, 1.0, 2.0]),
    (enumerate_sorted_items, [0.0, 1.0, 2.0]),
])
def test_jit_of_vmap_knows_the_keys_of_a_dict_argument(fn, expected):
    """jit(vmap(f))(d): the batched source is made for d's keys (in_axes 0 spelled out key
    by key), as vmap(f)(d) is, so iterating d reads its keys."""
    np.testing.assert_allclose(np.asarray(redraft.jit(redraft.vmap(fn))(_d())), expected)
    inside = redraft.jit(lambda d: redraft.vmap(fn)(d))(_d())
    np.testing.assert_allclose(np.asarray(inside), expected)
