"""Array: attributes, host interop, immutability, `.at[]`, indexing, printing, operators."""
from __future__ import annotations

import operator
import pickle

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.runtime.array import Array, wrap_host
from redraft.numpy.promotion import promote, promote_inexact

F32 = np.dtype(np.float32)


def assert_array(x, expected, dtype=None, weak: bool | None = None) -> None:
    """`x` is a redraft Array equal to `expected`, of `dtype` and weak flag when given."""
    assert type(x) is Array, type(x)
    np.testing.assert_array_equal(np.asarray(x), np.asarray(expected))
    if dtype is not None:
        assert x.dtype == np.dtype(dtype), x.dtype
    if weak is not None:
        assert x.weak_type is weak


# ---- attributes ------------------------------------------------------------------------

def test_attributes():
    x = jnp.ones((2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.dtype == F32 and x.weak_type is False
    assert x.itemsize == 4 and x.nbytes == 24
    assert x.device == redraft.devices()[0]
    assert x.devices() == {redraft.devices()[0]}


def test_scalar_attributes_and_weak_type():
    x = jnp.add(1, 1.0)
    assert x.shape == () and x.ndim == 0 and x.size == 1
    assert x.dtype == F32 and x.weak_type is True


def test_block_until_ready_returns_the_array():
    x = jnp.arange(3)
    assert x.block_until_ready() is x


# ---- host interop ----------------------------------------------------------------------

def test_np_asarray_shares_memory_and_is_read_only():
    x = jnp.arange(4.0)
    host = np.asarray(x)
    assert type(host) is np.ndarray
    assert np.shares_memory(host, np.asarray(x))
    assert host.flags.writeable is False
    with pytest.raises(ValueError):
        host[0] = 5.0
    assert float(x[0]) == 0.0


def test_np_asarray_with_dtype_and_copy():
    x = jnp.arange(3)
    as_float = np.asarray(x, dtype=np.float64)
    assert as_float.dtype == np.float64 and not np.shares_memory(as_float, np.asarray(x))
    copied = np.array(x, copy=True)
    assert copied.flags.writeable and not np.shares_memory(copied, np.asarray(x))


def test_array_from_numpy_does_not_alias_the_source():
    src = np.arange(3, dtype=np.float32)
    x = jnp.asarray(src)
    src[0] = 10.0
    assert float(x[0]) == 0.0


def test_tolist_and_item():
    assert jnp.arange(3).tolist() == [0, 1, 2]
    assert jnp.asarray(2.5).item() == 2.5


# ---- Python protocols ------------------------------------------------------------------

def test_iteration_over_first_axis():
    rows = list(jnp.arange(6).reshape(3, 2))
    assert len(rows) == 3
    for i, row in enumerate(rows):
        assert_array(row, [2 * i, 2 * i + 1], np.int32, weak=False)


def test_iteration_yields_0d_arrays_for_vectors():
    items = list(jnp.arange(3.0))
    assert all(type(v) is Array and v.shape == () for v in items)
    assert [float(v) for v in items] == [0.0, 1.0, 2.0]


def test_iteration_and_len_of_0d_raise():
    x = jnp.asarray(1.0)
    with pytest.raises(TypeError):
        iter(x)
    with pytest.raises(TypeError):
        len(x)


def test_len():
    assert len(jnp.zeros((4, 2))) == 4


def test_scalar_conversions():
    assert bool(jnp.asarray([1.0])) is True
    assert int(jnp.asarray(3.7)) == 3
    assert float(jnp.asarray([2])) == 2.0
    assert complex(jnp.asarray(1.0)) == 1 + 0j
    assert operator.index(jnp.asarray(3)) == 3


@pytest.mark.parametrize("convert", [int, float, complex])
def test_numeric_conversion_of_non_scalar_raises(convert):
    with pytest.raises(TypeError, match="size 1"):
        convert(jnp.arange(3.0))


def test_bool_of_non_scalar_raises():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.arange(3.0))


def test_index_of_float_raises():
    with pytest.raises(TypeError):
        operator.index(jnp.asarray(1.0))


def test_hash_raises():
    with pytest.raises(TypeError, match="unhashable"):
        hash(jnp.arange(3))


def test_setitem_raises_with_at_hint():
    x = jnp.arange(3)
    with pytest.raises(TypeError) as info:
        x[0] = 1
    assert "immutable" in str(info.value)
    assert "x.at[idx].set(y)" in str(info.value)
    assert_array(x, [0, 1, 2])


def test_delitem_raises():
    x = jnp.arange(3)
    with pytest.raises(TypeError, match="immutable"):
        del x[0]


def test_copy_and_pickle_round_trip():
    import copy
    x = jnp.add(1, 1.0)
    assert copy.copy(x) is x and copy.deepcopy(x) is x
    back = pickle.loads(pickle.dumps(x))
    assert_array(back, 2.0, np.float32, weak=True)
    m = jnp.arange(6).reshape(2, 3)
    assert_array(pickle.loads(pickle.dumps(m)), np.arange(6).reshape(2, 3), np.int32, False)


# ---- .at[] -----------------------------------------------------------------------------

def test_at_set_returns_a_copy():
    x = jnp.zeros(4)
    y = x.at[1].set(5.0)
    assert_array(y, [0, 5, 0, 0], np.float32, weak=False)
    assert_array(x, [0, 0, 0, 0])


@pytest.mark.parametrize("op, values, expected", [
    ("set", 9.0, [1, 9, 3, 4]),
    ("add", 10.0, [1, 12, 3, 4]),
    ("multiply", 3.0, [1, 6, 3, 4]),
    ("divide", 4.0, [1, 0.5, 3, 4]),
    ("power", 3.0, [1, 8, 3, 4]),
    ("min", 1.5, [1, 1.5, 3, 4]),
    ("max", 2.5, [1, 2.5, 3, 4]),
])
def test_at_ops(op, values, expected):
    x = jnp.asarray([1.0, 2.0, 3.0, 4.0])
    assert_array(getattr(x.at[1], op)(values), expected, np.float32, weak=False)


def test_at_get():
    x = jnp.arange(5.0)
    assert_array(x.at[2].get(), 2.0, np.float32)
    assert_array(x.at[1:3].get(), [1.0, 2.0])


def test_at_add_accumulates_duplicate_indices():
    x = jnp.zeros(3)
    assert_array(x.at[jnp.array([0, 0, 2, 0])].add(1.0), [3, 0, 1])


def test_at_multiply_accumulates_duplicate_indices():
    x = jnp.ones(3) * 2
    assert_array(x.at[jnp.array([1, 1])].multiply(3.0), [2, 18, 2])


def test_at_min_max_with_duplicates():
    x = jnp.asarray([5.0, 5.0])
    assert_array(x.at[jnp.array([0, 0])].min(jnp.asarray([3.0, 1.0])), [1, 5])
    assert_array(x.at[jnp.array([1, 1])].max(jnp.asarray([7.0, 6.0])), [5, 7])


def test_at_out_of_range_updates_are_dropped():
    x = jnp.arange(4.0)
    assert_array(x.at[jnp.array([1, 10])].set(9.0), [0, 9, 2, 3])
    assert_array(x.at[jnp.array([10, -10])].add(1.0), [0, 1, 2, 3])


def test_out_of_range_array_reads_are_clamped():
    x = jnp.arange(4.0)
    assert_array(x[jnp.array([0, 9, -1, -9])], [0, 3, 3, 0])


def test_at_negative_indices():
    x = jnp.arange(4.0)
    assert_array(x.at[-1].set(7.0), [0, 1, 2, 7])
    assert_array(x.at[jnp.array([-1, -2])].add(1.0), [0, 1, 3, 4])


def test_at_boolean_mask():
    x = jnp.arange(5.0)
    assert_array(x.at[x > 2].set(0.0), [0, 1, 2, 0, 0])
    assert_array(x.at[x < 2].add(10.0), [10, 11, 2, 3, 4])


def test_at_slice_and_2d():
    m = jnp.zeros((2, 3), dtype=jnp.int32)
    assert_array(m.at[:, 1].set(5), [[0, 5, 0], [0, 5, 0]], np.int32)
    assert_array(m.at[1].add(jnp.arange(3)), [[0, 0, 0], [0, 1, 2]], np.int32)


def test_at_values_are_cast_to_the_array_dtype():
    x = jnp.arange(3)
    y = x.at[0].set(2.7)
    assert_array(y, [2, 1, 2], np.int32, weak=False)


def test_at_shape_mismatch_raises():
    with pytest.raises(ValueError):
        jnp.arange(4.0).at[1:3].set(jnp.ones(3))


def test_at_divide_on_integers():
    # JAX divides x by a scatter of the divisors: true division, a float result
    assert_array(jnp.arange(6).at[3].divide(2), [0, 1, 2, 1.5, 4, 5], np.float32)


# ---- indexing --------------------------------------------------------------------------

def test_integer_indexing_and_negative_indices():
    x = jnp.arange(5.0)
    assert_array(x[3], 3.0, np.float32, weak=False)
    assert_array(x[-1], 4.0)
    assert x[3].shape == ()
    m = jnp.arange(6).reshape(2, 3)
    assert_array(m[1], [3, 4, 5], np.int32)
    assert_array(m[-1, -1], 5)


def test_integer_index_keeps_weak_type():
    weak = wrap_host(np.arange(3, dtype=np.float32), True)
    assert weak[1].weak_type is True
    assert jnp.arange(3.0)[1].weak_type is False


def test_integer_index_result_is_backed_by_an_ndarray():
    x = jnp.arange(5.0)
    assert type(np.asarray(x[2])) is np.ndarray


def test_integer_index_out_of_range_clamps_as_in_jax():
    assert_array(jnp.arange(3)[3], 2)
    assert_array(jnp.arange(3)[-4], 0)


def test_indexing_a_0d_array_raises():
    with pytest.raises(IndexError):
        jnp.asarray(1.0)[0]


def test_numpy_integer_and_array_indices():
    x = jnp.arange(5) * 10
    assert_array(x[np.int64(2)], 20)
    assert_array(x[np.array([4, 0])], [40, 0])
    assert_array(x[[1, 2]], [10, 20])


def test_boolean_mask():
    x = jnp.arange(6.0)
    assert_array(x[x > 2.5], [3, 4, 5])
    assert_array(x[np.array([True, False] * 3)], [0, 2, 4])


def test_boolean_mask_shape_mismatch_raises():
    with pytest.raises(IndexError):
        jnp.arange(6.0)[jnp.asarray([True, False])]


@pytest.mark.parametrize("sl", [slice(3, 0, -1), slice(-2, None), slice(1, None, 2),
                                slice(None, 2), slice(None)])
def test_slices(sl):
    n = np.arange(6.0, dtype=np.float32)
    assert_array(jnp.asarray(n)[sl], n[sl])


@pytest.mark.parametrize("sl", [slice(None, None, -1), slice(None, None, -2),
                                slice(4, None, -1), slice(-1, -7, -2)])
def test_slices_with_negative_steps_to_the_start(sl):
    n = np.arange(6.0, dtype=np.float32)
    assert_array(jnp.asarray(n)[sl], n[sl])


def test_none_and_ellipsis():
    n = np.arange(24).reshape(2, 3, 4).astype(np.int32)
    x = jnp.asarray(n)
    assert x[None].shape == (1, 2, 3, 4)
    assert x[..., None].shape == (2, 3, 4, 1)
    assert_array(x[..., 1], n[..., 1])
    assert_array(x[1, ..., 2], n[1, ..., 2])
    assert_array(x[:, None, 1], n[:, None, 1])


def test_two_ellipses_raise():
    with pytest.raises(IndexError):
        jnp.zeros((2, 2))[..., ...]


def test_too_many_indices_raise():
    with pytest.raises(IndexError, match="too many indices"):
        jnp.zeros((2, 2))[0, 0, 0]


def test_float_index_raises():
    with pytest.raises((TypeError, IndexError)):
        jnp.arange(3)[1.0]


# ---- printing --------------------------------------------------------------------------

@pytest.mark.parametrize("make, text", [
    (lambda: jnp.arange(3.0) * 1.05, "Array([0.  , 1.05, 2.1 ], dtype=float32)"),
    (lambda: jnp.add(1, 1.0), "Array(2., dtype=float32, weak_type=True)"),
    (lambda: jnp.negative(1), "Array(-1, dtype=int32, weak_type=True)"),
    (lambda: jnp.zeros((0,)), "Array([], shape=(0,), dtype=float32)"),
    (lambda: jnp.zeros((2, 0), dtype=jnp.int32), "Array([], shape=(2, 0), dtype=int32)"),
    (lambda: jnp.asarray([True, False]), "Array([ True, False], dtype=bool)"),
    (lambda: jnp.arange(3), "Array([0, 1, 2], dtype=int32)"),
    (lambda: jnp.asarray(1 + 2j), "Array(1.+2.j, dtype=complex64, weak_type=True)"),  # JAX's
    (lambda: jnp.ones((2, 3)), "Array([[1., 1., 1.],\n       [1., 1., 1.]], dtype=float32)"),
    (lambda: jnp.ones((2, 1, 2)),
     "Array([[[1., 1.]],\n\n       [[1., 1.]]], dtype=float32)"),
])
def test_repr(make, text):
    assert repr(make()) == text


def test_repr_long_vector_wraps_like_numpy():
    text = repr(jnp.arange(30.0))
    lines = text.split("\n")
    assert lines[0].startswith("Array([ 0.,  1.,")
    assert all(line.startswith("       ") for line in lines[1:])
    assert text.endswith("29.], dtype=float32)")
    assert max(len(line) for line in lines) <= np.get_printoptions()["linewidth"]


def _jax_repr(x: Array) -> str:
    """JAX's ArrayImpl.__repr__ algorithm, applied to the host value of `x`."""
    prefix = "Array("
    dtype_str = f"dtype={x.dtype.name}" + (", weak_type=True)" if x.weak_type else ")")
    width = np.get_printoptions()["linewidth"]
    body = np.array2string(np.asarray(x), prefix=prefix, suffix=",", separator=", ",
                           max_line_width=width)
    last_line = len(body) - body.rfind("\n") + 1
    sep = " " * len(prefix) if last_line + len(dtype_str) + 1 > width else " "
    return f"{prefix}{body},{sep}{dtype_str}"


@pytest.mark.parametrize("make", [lambda: jnp.arange(100.0), lambda: jnp.linspace(0, 1, 13),
                                  lambda: jnp.arange(12.0).reshape(3, 4) / 7])
def test_repr_matches_jax_algorithm(make):
    x = make()
    assert repr(x) == _jax_repr(x)


def test_repr_full_last_line_matches_jax():
    x = jnp.linspace(0, 1, 10)
    assert repr(x) == _jax_repr(x)
    assert repr(x).endswith("1.        ],      dtype=float32)")


def test_str_is_numpys():
    assert str(jnp.arange(3.0)) == "[0. 1. 2.]"
    assert str(jnp.asarray(2.5)) == "2.5"
    assert str(jnp.ones((2, 2), dtype=jnp.int32)) == "[[1 1]\n [1 1]]"


def test_format():
    assert format(jnp.asarray(2.5), ".2f") == "2.50"
    assert f"{jnp.asarray(3):>4}" == "   3"
    assert format(jnp.arange(3)) == "[0 1 2]"
    assert f"{jnp.arange(2)}" == "[0 1]"


# ---- operators -------------------------------------------------------------------------

X_NP = np.array([1.5, -2.0, 3.25], dtype=np.float32)
Y_NP = np.array([0.5, 4.0, -1.0], dtype=np.float32)
I_NP = np.array([7, -3, 12], dtype=np.int32)
J_NP = np.array([2, 5, 3], dtype=np.int32)

ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
              operator.floordiv, operator.mod]
COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
BITWISE = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def _close(x, expected, dtype) -> None:
    assert type(x) is Array, type(x)
    assert x.dtype == np.dtype(dtype), x.dtype
    np.testing.assert_allclose(np.asarray(x), expected, rtol=1e-6)


@pytest.mark.parametrize("op", ARITHMETIC, ids=lambda op: op.__name__)
def test_float_arithmetic(op):
    x, y = jnp.asarray(X_NP), jnp.asarray(Y_NP)
    _close(op(x, y), op(X_NP, Y_NP), np.float32)


@pytest.mark.parametrize("op", ARITHMETIC, ids=lambda op: op.__name__)
@pytest.mark.parametrize("scalar", [2, 0.5])
def test_reflected_arithmetic_with_python_scalars(op, scalar):
    x = jnp.asarray(np.abs(X_NP))
    _close(op(scalar, x), op(np.float32(scalar), np.abs(X_NP)), np.float32)
    _close(op(x, scalar), op(np.abs(X_NP), np.float32(scalar)), np.float32)


@pytest.mark.parametrize("op", ARITHMETIC + COMPARISONS + [operator.matmul],
                         ids=lambda op: op.__name__)
def test_numpy_array_on_the_left_gives_an_array(op):
    x = jnp.asarray(Y_NP)
    out = op(X_NP, x)
    assert type(out) is Array, type(out)
    np.testing.assert_allclose(np.asarray(out), op(X_NP, Y_NP), rtol=1e-6)


def test_numpy_scalar_on_the_left_gives_an_array():
    x = jnp.asarray(Y_NP)
    _close(np.float32(2) * x, 2 * Y_NP, np.float32)
    _close(np.float64(2) - x, 2 - Y_NP, np.float32)
    assert (np.float32(2) * x).weak_type is False


def test_numpy_ufunc_on_an_array_gives_numpy():
    out = np.sin(jnp.asarray(X_NP))
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, np.sin(X_NP))


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda op: op.__name__)
def test_comparisons(op):
    x, y = jnp.asarray(X_NP), jnp.asarray(Y_NP)
    assert_array(op(x, y), op(X_NP, Y_NP), np.bool_, weak=False)
    assert_array(op(x, 1.5), op(X_NP, np.float32(1.5)), np.bool_, weak=False)
    assert_array(op(1.5, x), op(np.float32(1.5), X_NP), np.bool_, weak=False)


@pytest.mark.parametrize("op", [op for op in ARITHMETIC if op is not operator.truediv],
                         ids=lambda op: op.__name__)
def test_integer_arithmetic(op):
    i, j = jnp.asarray(I_NP), jnp.asarray(J_NP)
    _close(op(i, j), op(I_NP, J_NP), np.int32)


@pytest.mark.parametrize("fn", [jnp.divide, jnp.true_divide, jnp.arctan2])
def test_true_divide_of_integers_is_float(fn):
    out = fn(jnp.asarray(I_NP), jnp.asarray(J_NP))
    _close(out, fn(I_NP.astype(np.float32), J_NP.astype(np.float32)), np.float32)


@pytest.mark.parametrize("op", BITWISE, ids=lambda op: op.__name__)
def test_bitwise_operators(op):
    i, j = jnp.asarray(np.abs(I_NP)), jnp.asarray(J_NP)
    assert_array(op(i, j), op(np.abs(I_NP), J_NP), np.int32)
    assert_array(op(i, 1), op(np.abs(I_NP), 1), np.int32, weak=False)
    assert_array(op(1, j), op(1, J_NP), np.int32, weak=False)


def test_bitwise_on_floats_raises():
    with pytest.raises(TypeError):
        jnp.asarray(X_NP) & 1
    with pytest.raises(TypeError):
        jnp.asarray(X_NP) & jnp.asarray(Y_NP)


def test_unary_operators():
    x, i = jnp.asarray(X_NP), jnp.asarray(I_NP)
    assert_array(-x, -X_NP, np.float32)
    assert_array(+x, X_NP, np.float32)
    assert_array(abs(x), np.abs(X_NP), np.float32)
    assert_array(~i, ~I_NP, np.int32)
    assert_array(~jnp.asarray([True, False]), [False, True], np.bool_)
    assert_array(round(jnp.asarray([1.26, 2.5])), [1.0, 2.0])


def test_matmul():
    m = jnp.arange(6.0).reshape(2, 3)
    v = jnp.asarray([1.0, 2.0, 3.0])
    assert_array(m @ v, np.arange(6.0).reshape(2, 3) @ [1, 2, 3], np.float32)
    assert_array(np.ones((1, 2), np.float32) @ m, [[3, 5, 7]], np.float32)


def test_divmod():
    q, r = divmod(jnp.asarray(I_NP), 5)
    assert_array(q, I_NP // 5, np.int32)
    assert_array(r, I_NP % 5, np.int32)
    q, r = divmod(17, jnp.asarray(J_NP))
    assert_array(q, 17 // J_NP)
    assert_array(r, 17 % J_NP)


def test_power_forms():
    x = jnp.asarray([1.0, 2.0, 3.0])
    assert_array(x ** 2, [1, 4, 9], np.float32, weak=False)
    assert_array(2 ** x, [2, 4, 8], np.float32, weak=False)
    np.testing.assert_allclose(np.asarray(x ** 0.5), np.sqrt([1, 2, 3]), rtol=1e-6)
    assert_array(jnp.arange(4) ** 2, [0, 1, 4, 9], np.int32)


# ---- weak types through operators -------------------------------------------------------

def test_weak_types_through_operators():
    x = jnp.asarray(X_NP)
    assert (x * 2.0).dtype == F32 and (x * 2.0).weak_type is False
    assert (2 * x).weak_type is False
    w = jnp.add(1, 1.0)
    assert (w * 2.0).weak_type is True and (w * 2.0).dtype == F32
    assert (w + x).weak_type is False
    i = jnp.arange(3)
    assert (i + 1).dtype == np.int32 and (i + 1).weak_type is False
    assert (i + 1.5).dtype == F32
    half = jnp.asarray(X_NP).astype(jnp.float16)
    assert (half * 2.0).dtype == np.float16
    assert (jnp.arange(3, dtype=jnp.uint8) + 1).dtype == np.uint8
    assert (jnp.asarray([True]) + 1).dtype == np.int32


# Python scalars must give exactly what promoting them as weak values gives (dtype, weak
# flag, bits, errors): eager code may take shortcuts, never different answers.
SCALAR_CASES = [
    (np.float32, [0.1, 3, -2.5e38, 1e-45, 16777217, 2 ** 31 - 1, float("inf"), 1j]),
    (np.complex64, [0.1, 3, 1 - 2j, 1e30 + 1e-30j]),
    (np.int32, [0, 7, -3, 2 ** 31 - 1, -(2 ** 31), 2.5]),
    (np.float16, [0.1, 3]),
    (np.uint8, [3, 1.5]),
]
SCALAR_FNS = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum, jnp.equal,
              jnp.not_equal, jnp.less, jnp.greater_equal, jnp.bitwise_and, jnp.left_shift]
INEXACT_SCALAR_FNS = [jnp.divide, jnp.arctan2, jnp.nextafter]


def _outcome(fn, *args):
    try:
        return fn(*args)
    except (TypeError, ValueError) as err:
        return type(err)


def _promoted(fn, *args):
    """`fn` applied after JAX's promotion of `args` to one dtype (the reference)."""
    prep = promote_inexact if fn in INEXACT_SCALAR_FNS else promote
    return _outcome(lambda *a: fn(*prep(*a)), *args)


def _check_same(out, expected) -> None:
    if isinstance(expected, type):
        assert out is expected
        return
    assert type(out) is Array
    assert (out.dtype, out.weak_type) == (expected.dtype, expected.weak_type)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


@pytest.mark.parametrize("dtype, scalars", SCALAR_CASES, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("fn", SCALAR_FNS + INEXACT_SCALAR_FNS, ids=lambda fn: fn.__name__)
def test_python_scalar_operands_match_promotion(fn, dtype, scalars):
    host = (np.random.default_rng(0).normal(size=5) * 100).astype(dtype)
    arrays = [jnp.asarray(host)]
    if dtype in (np.float32, np.int32, np.complex64):  # the dtypes weak values can have
        arrays.append(wrap_host(host, True))
    with np.errstate(over="ignore"):
        for x in arrays:
            for scalar in scalars:
                _check_same(_outcome(fn, x, scalar), _promoted(fn, x, scalar))
                _check_same(_outcome(fn, scalar, x), _promoted(fn, scalar, x))


@pytest.mark.parametrize("make", [
    lambda: jnp.add(1.0, 2.0), lambda: jnp.sin(jnp.asarray(1.0)), lambda: jnp.sum(jnp.ones(3)),
    lambda: jnp.arange(3.0)[1], lambda: 2.0 * jnp.asarray(1.0), lambda: jnp.asarray(1.0) < 2,
    lambda: jnp.add(jnp.asarray(1.0), jnp.asarray(2.0)), lambda: jnp.ones((2, 2))[1, 1],
    lambda: jnp.max(jnp.arange(3)), lambda: -jnp.asarray(1),
], ids=["weak-add", "sin", "sum", "index", "scalar-mul", "compare", "add", "index-2d", "max",
        "neg"])
def test_0d_results_hold_ndarray_buffers(make):
    out = make()
    assert type(out) is Array and out.shape == ()
    assert type(np.asarray(out)) is np.ndarray


def test_shape_mismatch_error_names_the_primitive():
    with pytest.raises(ValueError, match=r"lax\.add.*\(3,\).*\(4,\)"):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(ValueError, match=r"lax\.mul"):
        jnp.ones(3) * np.ones(4, np.float32)


def test_python_int_outside_int32_raises():
    with pytest.raises(OverflowError):
        jnp.arange(3) + 2 ** 40
    with pytest.raises(OverflowError):
        jnp.arange(3.0) * 2 ** 40


# ---- methods ---------------------------------------------------------------------------

M_NP = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_sum_mean_methods():
    m = jnp.asarray(M_NP)
    assert_array(m.sum(), 15.0, np.float32, weak=False)
    assert_array(m.sum(0), [3, 5, 7])
    assert_array(m.sum(axis=1, keepdims=True), [[3], [12]])
    assert m.sum(axis=1, keepdims=True).shape == (2, 1)
    assert_array(m.mean(0), [1.5, 2.5, 3.5], np.float32)
    assert_array(jnp.arange(4).mean(), 1.5, np.float32)
    assert_array(jnp.arange(4).sum(), 6, np.int32)


def test_transposes():
    m = jnp.asarray(M_NP)
    assert_array(m.T, M_NP.T)
    assert_array(m.transpose(), M_NP.T)
    assert_array(m.transpose(1, 0), M_NP.T)
    assert_array(m.transpose((1, 0)), M_NP.T)


def test_reshape_forms():
    x = jnp.arange(6.0)
    assert x.reshape(2, 3).shape == (2, 3)
    assert x.reshape((2, 3)).shape == (2, 3)
    assert x.reshape(-1, 2).shape == (3, 2)
    assert_array(x.reshape(3, 2), np.arange(6.0).reshape(3, 2))


def test_flatten_ravel_squeeze():
    m = jnp.asarray(M_NP)
    assert_array(m.flatten(), M_NP.ravel())
    assert_array(m.ravel(), M_NP.ravel())
    assert m.reshape(1, 6, 1).squeeze().shape == (6,)


def test_astype():
    m = jnp.asarray(M_NP)
    assert_array(m.astype(jnp.int32), M_NP.astype(np.int32), np.int32, weak=False)
    assert m.astype(float).dtype == F32
    assert m.astype("float64").dtype == F32


def test_astype_drops_weak_type():
    assert jnp.add(1, 1.0).astype(jnp.float32).weak_type is False


def test_clip_round_argmax():
    m = jnp.asarray(M_NP)
    assert_array(m.clip(1, 3), np.clip(M_NP, 1, 3), np.float32)
    assert_array((m * 1.234).round(1), np.round(M_NP * np.float32(1.234), 1))
    assert_array(m.argmax(), 5, np.int32)
    assert_array(m.argmax(axis=0), [1, 1, 1], np.int32)


def test_copy_returns_itself():
    x = jnp.arange(3)
    assert x.copy() is x
