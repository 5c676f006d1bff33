"""The two API levels: redraft.lax refuses mixed dtypes, redraft.numpy promotes them with
JAX's lattice (32-bit defaults, weakly typed Python scalars)."""
import numpy as np
import pytest

import redraft.numpy as jnp
from redraft import lax

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i16, i32, i64 = np.int8, np.int16, np.int32, np.int64
u8, u16, u32 = np.uint8, np.uint16, np.uint32
c64 = np.complex64


def arr(dtype):
    """A small array of `dtype` (NumPy, so 64-bit types reach redraft as they are)."""
    return np.ones(2, dtype=dtype)


# (left operand, right operand, result dtype, result weak_type), as JAX computes them.
PROMOTIONS = [
    (arr(i32), arr(f32), f32, False),
    (arr(u8), arr(i8), i16, False),
    (arr(u8), arr(i32), i32, False),
    (arr(u16), arr(i8), i32, False),
    (arr(i8), arr(i16), i16, False),
    (arr(u32), arr(i32), i32, False),  # int64, canonicalised to 32 bits
    (arr(i32), arr(f16), f16, False),
    (arr(f16), arr(f32), f32, False),
    (arr(f32), arr(c64), c64, False),
    (arr(bool), arr(u8), u8, False),
    (arr(bool), arr(f32), f32, False),
    (1, arr(f32), f32, False),  # Python int with float32: float32, not weak
    (1, arr(u8), u8, False),
    (2.5, arr(f16), f16, False),
    (1, 2, i32, True),
    (1, 1.0, f32, True),
    (1j, arr(f32), c64, False),
    (arr(f64), arr(f64), f32, False),  # 64-bit inputs become 32-bit
    (arr(i64), arr(i64), i32, False),
    (arr(i64), arr(f64), f32, False),
    (np.float64(1.0), arr(f32), f32, False),
]


# A strong operand promoted to a weak result type: JAX's result is weak (the lattice's
# answer is a weak node), redraft keeps each operand's own flag and returns a strong result.
WEAK_RESULTS = [
    (1.5, arr(i32), f32, True),  # Python float with int32: a weak float32
    (2.0, arr(i8), f32, True),
    (True, 1, i32, True),  # bool with a Python int: a weak int32
    (arr(bool), 1, i32, True),
]


def _check_promotion(x, y, dtype, weak):
    for out in (jnp.add(x, y), jnp.add(y, x)):
        assert out.dtype == dtype
        assert out.weak_type == weak


@pytest.mark.parametrize("x,y,dtype,weak", PROMOTIONS,
                         ids=[f"{i}" for i in range(len(PROMOTIONS))])
def test_numpy_api_promotes_like_jax(x, y, dtype, weak):
    _check_promotion(x, y, dtype, weak)


@pytest.mark.parametrize("x,y,dtype,weak", WEAK_RESULTS,
                         ids=[f"{i}" for i in range(len(WEAK_RESULTS))])
def test_weak_lattice_results(x, y, dtype, weak):
    _check_promotion(x, y, dtype, weak)


def test_repr_of_weak_result():
    assert repr(jnp.add(1, 1.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(lax.add(jnp.float32(1), 1.0)) == "Array(2., dtype=float32)"


def test_weak_types_survive_arithmetic_until_a_strong_operand():
    weak = jnp.multiply(2, 3.0)
    assert weak.weak_type and weak.dtype == np.float32
    assert jnp.add(weak, arr(f16)).dtype == np.float16
    assert not jnp.add(weak, arr(f32)).weak_type


def test_other_promoting_functions():
    assert jnp.where(arr(bool), arr(i32), arr(f16)).dtype == np.float16
    assert jnp.concatenate([arr(u8), arr(i8)]).dtype == np.int16
    assert jnp.maximum(arr(i32), 0.5).dtype == np.float32
    assert jnp.divide(arr(i32), arr(i32)).dtype == np.float32


STRICT_REFUSALS = [
    (lambda: lax.add(1, 1.0), ("int32", "float32")),
    (lambda: lax.add(arr(i32), arr(f32)), ("int32", "float32")),
    (lambda: lax.sub(arr(u8), arr(i8)), ("uint8", "int8")),
    (lambda: lax.mul(arr(f16), arr(f32)), ("float16", "float32")),
    (lambda: lax.add(jnp.int32(1), 1.5), ("int32", "float32")),
    (lambda: lax.max(arr(i32), arr(i16)), ("int32", "int16")),
    (lambda: lax.eq(arr(f32), arr(i32)), ("float32", "int32")),
    (lambda: lax.select(arr(bool), arr(f32), arr(i32)), ("float32", "int32")),
    (lambda: lax.dot_general(arr(f32), arr(i32), (((0,), (0,)), ((), ()))),
     ("float32", "int32")),
    (lambda: lax.concatenate([arr(f32), arr(f16)], 0), ("float32", "float16")),
    (lambda: lax.pad(arr(f32), np.int32(0), [(1, 1, 0)]), ("float32", "int32")),
    (lambda: lax.dynamic_update_slice(arr(f32), arr(i32), (0,)), ("float32", "int32")),
]


@pytest.mark.parametrize("fn,names", STRICT_REFUSALS,
                         ids=[str(i) for i in range(len(STRICT_REFUSALS))])
def test_lax_refuses_mixed_dtypes(fn, names):
    with pytest.raises(TypeError, match="same dtype") as info:
        fn()
    for name in names:
        assert name in str(info.value)


def test_lax_accepts_weak_scalars_of_the_same_kind():
    out = lax.add(arr(f16), 1.0)
    assert out.dtype == np.float16 and not out.weak_type
    assert lax.mul(arr(i8), 3).dtype == np.int8
    assert lax.add(arr(f32), 2).dtype == np.float32


def test_lax_conv_refuses_mixed_dtypes():
    lhs, rhs = np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.int32)
    with pytest.raises(TypeError, match="float32.*int32"):
        lax.conv_general_dilated(lhs, rhs, (1,), "VALID")
