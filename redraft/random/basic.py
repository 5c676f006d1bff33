"""Keys and the samplers JAX builds directly on random bits: uniform, normal, randint, bernoulli,
permutation and choice, gumbel and categorical, and the elementwise families made of them."""
from __future__ import annotations

import functools
import inspect
import math
import operator
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from redraft.compiler.primitives.random import SAMPLERS, random_sample
from redraft.kernels import threefry
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime import dtypes
from redraft.runtime.dtypes import canonicalize
from redraft.runtime.pytree import register_pytree_node
from redraft.runtime.staged import StagedBuf

__all__ = [
    "exponential",
    "laplace",
    "logistic",
    "rademacher",
    "rayleigh",
    "triangular",
    "PRNGKey",
    "PRNGKeyArray",
    "bernoulli",
    "bits",
    "categorical",
    "choice",
    "fold_in",
    "gumbel",
    "key",
    "key_data",
    "normal",
    "orthogonal",
    "permutation",
    "randint",
    "shuffle",
    "split",
    "truncated_normal",
    "uniform",
    "wrap_key_data",
    "clone",
    "key_dtype",
    "key_impl",
]

Shape = Sequence[int]
KeyLike = Any  # a PRNGKeyArray, or uint32 key data of shape (..., 2)


def _wrap(value: np.ndarray) -> Any:
    """The redraft Array returned for a freshly computed NumPy result (never written again)."""
    return wrap_host(np.asarray(value))


def _is_staged(value: Any) -> bool:
    """Whether `value` is only known when compiled code runs (inside jit's staging)."""
    return isinstance(value, Array) and type(value._buf) is StagedBuf


def _sampler(name: str):
    """Register a host sampler under `name` (compiler/primitives/random.py runs it)."""
    def register(fn):
        SAMPLERS[name] = fn
        return fn
    return register


def _sample(sampler: str, out_shape: tuple[int, ...], out_dtype: Any, first: Any, /,
            **values: Any) -> Any:
    """SAMPLERS[sampler](first, **values), a redraft Array of out_shape and out_dtype: now, or
    recorded into compiled code when `first` or an array among `values` is staged. Python
    numbers and strings stay static parameters, so both paths compute the same bits."""
    arrays = {k: v for k, v in values.items() if isinstance(v, (Array, np.ndarray, np.generic))}
    if not (_is_staged(first) or any(_is_staged(v) for v in arrays.values())):
        return _wrap(SAMPLERS[sampler](first, **values))
    static = {k: v for k, v in values.items() if k not in arrays}
    static["operand_names"] = tuple(arrays)
    operands = (as_array(first),) + tuple(as_array(v) for v in arrays.values())
    return random_sample(sampler, operands, out_shape, out_dtype, static)


def _recordable(name: str):
    """Make an eager sampler work on keys and parameters only known when compiled code runs.

    The decorated function computes its samples now from host key words. When the key or an
    array argument is staged (inside jit), the call is recorded instead as the host sampler
    `name`, which runs the same function when the compiled code runs; the result's shape and
    dtype come from running it once on a stand-in key and stand-in arrays (neither depends on
    the values)."""
    def decorate(eager):
        def host(words: np.ndarray, **arguments: Any) -> np.ndarray:
            return np.asarray(eager(words, **arguments))

        SAMPLERS[name] = host

        @functools.wraps(eager)
        def sampler(key: KeyLike, *args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(eager).bind(key, *args, **kwargs)
            bound.apply_defaults()
            arguments = {k: tuple(v) if isinstance(v, list) else v
                         for k, v in bound.arguments.items()}
            key = arguments.pop(next(iter(arguments)))
            staged_key = _is_staged(key) or (isinstance(key, PRNGKeyArray)
                                             and _is_staged(key._data))
            if not staged_key and not any(_is_staged(v) for v in arguments.values()):
                return eager(key, **arguments)
            words = _single_key(name, key)
            stand_ins = {k: np.zeros(v.shape, v.dtype) if _is_staged(v) else v
                         for k, v in arguments.items()}
            probe = np.asarray(eager(np.zeros(threefry.KEY_SHAPE, np.uint32), **stand_ins))
            return _sample(name, probe.shape, probe.dtype, words, **arguments)
        return sampler
    return decorate


# ---------------------------------------------------------------------------------------------
# Keys


class _KeyDType:
    """The dtype of typed keys, printed as JAX prints it."""

    name = "key<fry>"

    def __repr__(self) -> str:
        return self.name


class PRNGKeyArray:
    """An array of Threefry keys: shape `shape`, each key two hidden uint32 words.

    Indexing and iteration run over the leading key axes, so `k1, k2 = split(key)` works.
    Keys are not numbers: use `key_data` to see the words.
    """

    __slots__ = ("_data",)
    dtype = _KeyDType()

    def __init__(self, data: np.ndarray) -> None:
        if _is_staged(data):  # inside jit: the words are known when compiled code runs
            self._data = _check_staged_key_data("PRNGKeyArray", data)
            return
        data = _check_key_data("PRNGKeyArray", data)
        if data.flags.writeable:
            data = data.copy()
            data.flags.writeable = False
        self._data = data

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape[:-1]

    @property
    def ndim(self) -> int:
        return self._data.ndim - 1

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a single key)")
        return self.shape[0]

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (PRNGKeyArray(self._data[i]) for i in range(self.shape[0]))

    def __getitem__(self, index) -> PRNGKeyArray:
        index = index if isinstance(index, tuple) else (index,)
        if not _is_staged(self._data):
            index = tuple(np.asarray(i) if hasattr(i, "__array__") else i for i in index)
        if not any(i is Ellipsis for i in index):
            index = index + (Ellipsis,)
        try:
            return PRNGKeyArray(self._data[index + (slice(None),)])
        except IndexError as err:
            raise IndexError(f"{err} (indexing a key array of shape {self.shape})") from None

    def reshape(self, *shape) -> PRNGKeyArray:
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return PRNGKeyArray(self._data.reshape(tuple(shape) + threefry.KEY_SHAPE))

    def ravel(self) -> PRNGKeyArray:
        return self.reshape(-1)

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return _wrap(np.all(self._data == other._data, axis=-1))

    def __ne__(self, other: object) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return _wrap(np.any(self._data != other._data, axis=-1))

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a key array cannot be converted to a NumPy array; use "
                        "redraft.random.key_data(keys) for its uint32 words.")

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._data}"


def _flatten_keys(keys: PRNGKeyArray):
    return (keys._data,), None


def _unflatten_keys(_aux, children) -> PRNGKeyArray:
    """Keys over `children[0]`: host words, staged words inside jit, or whatever a tree
    operation put in the leaf's place (vmap's axis specs), kept as it is."""
    keys = object.__new__(PRNGKeyArray)
    data = children[0]
    if isinstance(data, Array) and not _is_staged(data):
        data = np.asarray(data)
        data.flags.writeable = False
    keys._data = data
    return keys


# A key array's one leaf is its uint32 words, so keys pass into and out of jit as those
# words and come back typed (JAX's key arrays are leaves of a key dtype instead).
register_pytree_node(PRNGKeyArray, _flatten_keys, _unflatten_keys)


def _check_staged_key_data(name: str, data: Array) -> Array:
    """Staged uint32 key words of shape (..., 2), or a TypeError naming the problem."""
    if data.ndim < 1 or data.shape[-1] != 2 or data.dtype != np.uint32:
        raise TypeError(f"{name}: invalid PRNG key data: expected uint32 with a shape ending "
                        f"in (2,); got {data.dtype} {data.shape}")
    return data


def _check_key_data(name: str, data: Any) -> np.ndarray:
    """`data` as a uint32 NumPy array of shape (..., 2), or a TypeError naming the problem."""
    if isinstance(data, PRNGKeyArray):
        raise TypeError(f"{name} expects uint32 key data, but was given a typed key array; "
                        "use redraft.random.key_data(keys) for its data")
    try:
        array = np.asarray(data)
    except TypeError:
        array = None
    if array is None or array.dtype == object:
        raise TypeError(f"{name}: expected a PRNG key (from redraft.random.key or PRNGKey) "
                        f"or uint32 key data; got {type(data).__name__}")
    if array.ndim < 1 or array.shape[-1] != 2:
        raise TypeError(f"{name}: invalid PRNG key data: expected a shape ending in (2,); "
                        f"got shape {array.shape}")
    if array.dtype != np.uint32:
        raise TypeError(f"{name}: invalid PRNG key data: expected dtype uint32; "
                        f"got {array.dtype}")
    return array


def _key_words(name: str, key: KeyLike, batched: bool = False) -> tuple[np.ndarray, bool]:
    """(uint32 data of shape (..., 2), whether key was typed); single keys unless batched."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._data, True
    elif _is_staged(key):
        data, typed = _check_staged_key_data(name, key), False
    elif isinstance(key, (bool, int, float, complex)) or np.ndim(key) == 0:
        raise TypeError(f"{name}: expected a PRNG key (from redraft.random.key(seed) or "
                        f"PRNGKey(seed)), got {type(key).__name__} {key!r}")
    else:
        data, typed = _check_key_data(name, key), False
    if not batched and data.ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{data.shape[:-1]} != (). Use redraft.vmap for batching.")
    return data, typed


def _single_key(name: str, key: KeyLike) -> np.ndarray:
    return _key_words(name, key)[0]


def _return_keys(data: Any, typed: bool) -> Any:
    if _is_staged(data):
        return PRNGKeyArray(data) if typed else data
    return PRNGKeyArray(data) if typed else _wrap(data)


def _seed_words(name: str, seed: Any) -> np.ndarray:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use redraft.vmap for batching.")
    if isinstance(seed, int) and not isinstance(seed, bool):
        if not -(1 << 63) <= seed < 1 << 63:  # as JAX, which converts the seed to int64
            raise OverflowError(f"{name}: seed {seed} does not fit in a 64-bit integer")
        value = seed
    else:
        array = np.asarray(seed)
        if array.dtype.kind not in "iu":
            raise TypeError(f"{name}: PRNG key seed must be an integer; got {seed!r} "
                            f"of dtype {array.dtype}")
        value = int(array)
    return threefry.seed(value)


@_sampler("seed")
def _seed_host(seed: np.ndarray) -> np.ndarray:
    return threefry.seed(int(seed))


def _staged_seed_words(name: str, seed: Array) -> Array:
    """The key words of a seed only known when compiled code runs."""
    if seed.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{seed.shape} != (). Use redraft.vmap for batching.")
    if seed.dtype.kind not in "iu":
        raise TypeError(f"{name}: PRNG key seed must be an integer; got dtype {seed.dtype}")
    return _sample("seed", threefry.KEY_SHAPE, np.uint32, seed)


def key(seed: int | Any) -> PRNGKeyArray:
    """A typed PRNG key (shape ()) from an integer seed."""
    if _is_staged(seed):
        return PRNGKeyArray(_staged_seed_words("key", seed))
    return PRNGKeyArray(_seed_words("key", seed))


def PRNGKey(seed: int | Any) -> Any:
    """A legacy raw PRNG key from an integer seed: uint32 data of shape (2,)."""
    if _is_staged(seed):
        return _staged_seed_words("PRNGKey", seed)
    return _wrap(_seed_words("PRNGKey", seed))


def key_data(keys: KeyLike) -> Any:
    """The uint32 words under a key array: shape (*keys.shape, 2)."""
    data, _ = _key_words("key_data", keys, batched=True)
    return data if _is_staged(data) else _wrap(data.copy())


def wrap_key_data(key_bits_array: Any) -> PRNGKeyArray:
    """Typed keys from uint32 key data of shape (..., 2)."""
    if _is_staged(key_bits_array):
        return PRNGKeyArray(key_bits_array)
    return PRNGKeyArray(_check_key_data("wrap_key_data", key_bits_array))


def key_impl(keys: KeyLike) -> str:
    """The name of the PRNG implementation behind `keys` (always Threefry-2x32 here)."""
    _key_words("key_impl", keys, batched=True)
    return "threefry2x32"


def key_dtype(impl_spec: Any = None) -> _KeyDType:
    """The dtype of typed keys of implementation `impl_spec` (None or "threefry2x32")."""
    if impl_spec not in (None, "threefry2x32"):
        raise ValueError(f"key_dtype: redraft implements only the 'threefry2x32' PRNG, "
                         f"got {impl_spec!r}")
    return PRNGKeyArray.dtype


def clone(key: KeyLike) -> Any:
    """A copy of `key` (JAX's clone marks a key for reuse; redraft's keys are immutable values,
    so the copy is the same key)."""
    data, typed = _key_words("clone", key, batched=True)
    if _is_staged(data):
        return _return_keys(data, typed)
    return _return_keys(data.copy(), typed)


def split(key: KeyLike, num: int | Shape = 2) -> Any:
    """`num` new keys (a count or a shape), statistically independent of `key` and each other."""
    data, typed = _key_words("split", key)
    shape = (num,) if not isinstance(num, Sequence) else tuple(num)
    shape = _shape("split", shape)
    return _return_keys(_sample("split", shape + threefry.KEY_SHAPE, np.uint32, data,
                                shape=shape), typed)


@_sampler("split")
def _split_host(words: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return threefry.split(words, shape)


def _fold_in_word(data: Any) -> int:
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use redraft.vmap for batching.")
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data <= 0xFFFFFFFF:
            raise OverflowError(f"fold_in data {data} does not fit in uint32")
        return data
    array = np.asarray(data)
    if array.dtype.kind not in "iu":
        raise TypeError(f"fold_in data must be an integer, got {data!r} of dtype {array.dtype}")
    return int(array.astype(np.uint32))


def fold_in(key: KeyLike, data: int | Any) -> Any:
    """A new key determined by `key` and the 32-bit integer `data` (e.g. a step number)."""
    words, typed = _key_words("fold_in", key)
    if _is_staged(data):
        if data.ndim:
            raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                            f"{data.shape} != (). Use redraft.vmap for batching.")
        if data.dtype.kind not in "iu":
            raise TypeError(f"fold_in data must be an integer, got dtype {data.dtype}")
    return _return_keys(_sample("fold_in", threefry.KEY_SHAPE, np.uint32, words, data=data),
                        typed)


@_sampler("fold_in")
def _fold_in_host(words: np.ndarray, data: Any) -> np.ndarray:
    return threefry.fold_in(words, _fold_in_word(data))


# ---------------------------------------------------------------------------------------------
# Argument checks


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    """A shape as a tuple of nonnegative ints; an int alone is refused, as in JAX."""
    if isinstance(shape, (int, np.integer)) or not isinstance(shape, (Sequence, np.ndarray)):
        raise TypeError(f"{name}: shape must be a tuple of nonnegative integers, got {shape!r}"
                        + (f" (write ({shape},) for a 1-D shape)"
                           if isinstance(shape, (int, np.integer)) else ""))
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of nonnegative integers, "
                        f"got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{name}: shape must be a tuple of nonnegative integers, got {dims}")
    return dims


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    """Parameters must broadcast to `shape` exactly (JAX's rule for sampler arguments)."""
    if not param_shapes:
        return
    try:
        result = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        result = None
    if result != shape:
        raise ValueError(
            f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
            "the result of broadcasting the shapes must equal the shape argument, but got "
            f"parameter shapes {list(param_shapes)} for shape argument {shape}.")


def _result_shape(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """A sampler's output shape: `shape` checked against its parameters' shapes, or (None) the
    shape they broadcast to (JAX's rule for `shape=None`)."""
    param_shapes = [tuple(np.shape(p)) for p in params]
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*param_shapes)) if param_shapes else ()
        except ValueError:
            raise ValueError(f"{name}: parameter shapes {param_shapes} do not broadcast "
                             "together") from None
    shape = _shape(name, shape)
    _check_shape(name, shape, *param_shapes)
    return shape


def _dtype(name: str, dtype: Any, default: np.dtype, kinds: str, what: str) -> np.dtype:
    """The canonical dtype (32-bit unless x64 is on) for a `dtype=` argument of one of the
    numpy `kinds`."""
    try:
        resolved = canonicalize(default if dtype is None else np.dtype(dtype))
    except TypeError:
        raise TypeError(f"{name}: {dtype!r} is not a dtype") from None
    if resolved.kind not in kinds:
        raise ValueError(f"dtype argument to `{name}` must be {what}, got {resolved}")
    return resolved


def _float_dtype(name: str, dtype: Any, kinds: str = "f") -> np.dtype:
    what = "a float dtype" if kinds == "f" else "a float or complex dtype"
    resolved = _dtype(name, dtype, dtypes.DEFAULT_FLOAT, kinds, what)
    if resolved.kind == "f" and resolved.itemsize not in (2, 4, 8):
        raise ValueError(f"dtype argument to `{name}` must be float16, float32 or float64, "
                         f"got {resolved}")
    return resolved


def _canonical_array(value: Any) -> np.ndarray:
    """`value` as a NumPy array with redraft's 32-bit dtype (float64 data becomes float32)."""
    array = np.asarray(value)
    dtype = canonicalize(array.dtype)
    return array if array.dtype == dtype else array.astype(dtype)


def _axis(name: str, axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


# ---------------------------------------------------------------------------------------------
# Samplers: private versions take checked single-key data and return NumPy arrays


def bits(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (uint32 unless dtype says uint8/uint16)."""
    words = _single_key("bits", key)
    dtype = _dtype("bits", dtype, dtypes.DEFAULT_UINT, "u", "an unsigned int dtype")
    shape = _shape("bits", shape)
    return _sample("bits", shape, dtype, words, shape=shape, width=dtype.itemsize * 8)


@_sampler("bits")
def _bits_host(words: np.ndarray, shape: tuple[int, ...], width: int) -> np.ndarray:
    return threefry.random_bits(words, width, shape)


def _uniform(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype,
             minval: Any, maxval: Any) -> np.ndarray:
    minval, maxval = np.asarray(minval), np.asarray(maxval)
    _check_shape("uniform", shape, minval.shape, maxval.shape)
    if dtype == np.float32 and minval.ndim == 0 and maxval.ndim == 0:
        return threefry.uniform_float32(words, shape, minval, maxval)
    nbits = dtype.itemsize * 8
    unit = threefry.unit_floats(threefry.random_bits(words, nbits, shape), dtype)
    return threefry.scale_to_range(unit, minval.astype(dtype), maxval.astype(dtype))


def uniform(key: KeyLike, shape: Shape = (), dtype: Any = None, minval: Any = 0.,
            maxval: Any = 1.) -> Any:
    """Uniform floats in [minval, maxval), float32 unless dtype says float16."""
    words = _single_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _shape("uniform", shape)
    return _sample("uniform", shape, dtype, words, shape=shape, dtype=dtype.name,
                   minval=minval, maxval=maxval)


@_sampler("uniform")
def _uniform_host(words: np.ndarray, shape: tuple[int, ...], dtype: str, minval: Any,
                  maxval: Any) -> np.ndarray:
    return _uniform(words, shape, np.dtype(dtype), minval, maxval)


def _normal_real(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == np.float32:
        return threefry.normal_float32(words, shape)
    low = np.nextafter(dtype.type(-1), dtype.type(0))
    u = _uniform(words, shape, dtype, low, dtype.type(1))
    if dtype == np.float64:
        return np.sqrt(2) * threefry.erfinv_float64(u)
    return dtype.type(np.sqrt(2)) * threefry.erfinv_float32(u).astype(dtype)


def _normal(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype.kind != "c":
        return _normal_real(words, shape, dtype)
    real = np.dtype(f"float{dtype.itemsize * 4}")
    key_re, key_im = threefry.split(words, (2,))
    re = _normal_real(key_re, shape, real).astype(dtype)
    im = _normal_real(key_im, shape, real).astype(dtype)
    return (re + dtype.type(1j) * im) / dtype.type(np.sqrt(2))


def normal(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Standard normal samples: sqrt(2) * erfinv(u) for u uniform in (-1, 1)."""
    words = _single_key("normal", key)
    dtype = _float_dtype("normal", dtype, kinds="fc")
    shape = _shape("normal", shape)
    return _sample("normal", shape, dtype, words, shape=shape, dtype=dtype.name)


@_sampler("normal")
def _normal_host(words: np.ndarray, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return _normal(words, shape, np.dtype(dtype))


def _int_bounds(name: str, value: Any) -> np.ndarray:
    """randint bounds as int64 (floats truncate toward zero, as JAX's astype(int) does)."""
    array = np.asarray(value)
    if array.dtype.kind in "iub":
        return array.astype(np.int64)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name}: minval and maxval must be finite, got {value!r}")
        return np.trunc(array).astype(np.int64)
    raise TypeError(f"{name}: minval and maxval must be integers, got dtype {array.dtype}")


def _urem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a % b for unsigned arrays with XLA's rule a % 0 = a."""
    zero = b == 0
    return np.where(zero, a, a % np.where(zero, b.dtype.type(1), b))


def _randint(words: np.ndarray, shape: tuple[int, ...], minval: Any, maxval: Any,
             dtype: np.dtype) -> np.ndarray:
    """JAX's randint: 2 * nbits random bits per value folded into [minval, maxval)."""
    minval, maxval = _int_bounds("randint", minval), _int_bounds("randint", maxval)
    _check_shape("randint", shape, minval.shape, maxval.shape)
    info = np.iinfo(dtype)
    if info.bits < 32:  # sample in 32 bits to keep the modulus bias small
        low = np.clip(minval, info.min, info.max)
        high = np.clip(maxval, info.min, info.max + 1)
        return _randint(words, shape, low, high, np.dtype(np.int32)).astype(dtype)
    out_of_range = maxval > info.max
    minval = np.clip(minval, info.min, info.max)
    maxval = np.clip(maxval, info.min, info.max)
    nbits = info.bits
    unsigned = np.dtype(f"uint{nbits}")
    key_high, key_low = threefry.split(words, (2,))
    higher_bits = threefry.random_bits(key_high, nbits, shape)
    lower_bits = threefry.random_bits(key_low, nbits, shape)
    with np.errstate(over="ignore"):
        span = maxval.astype(unsigned) - minval.astype(unsigned)  # wraps: mod 2**nbits
    span = np.where(maxval <= minval, unsigned.type(1), span)  # empty range: always minval
    span = np.where(out_of_range & (maxval > minval), span + unsigned.type(1), span)
    multiplier = _urem(np.asarray(unsigned.type(1 << (nbits // 2))), span)
    multiplier = _urem(multiplier * multiplier, span)  # 2**nbits % span, without overflow
    offset = _urem(higher_bits, span) * multiplier + _urem(lower_bits, span)
    offset = _urem(offset, span)
    low = minval.astype(unsigned)
    return (low + offset).view(dtype)


def randint(key: KeyLike, shape: Shape, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers in [minval, maxval) (minval when maxval <= minval), int32 by default."""
    words = _single_key("randint", key)
    dtype = _dtype("randint", dtype, dtypes.DEFAULT_INT, "iu", "an integer dtype")
    shape = _shape("randint", shape)
    return _sample("randint", shape, dtype, words, shape=shape, dtype=dtype.name,
                   minval=minval, maxval=maxval)


@_sampler("randint")
def _randint_host(words: np.ndarray, shape: tuple[int, ...], dtype: str, minval: Any,
                  maxval: Any) -> np.ndarray:
    return _randint(words, shape, minval, maxval, np.dtype(dtype))


def bernoulli(key: KeyLike, p: Any = 0.5, shape: Shape | None = None,
              mode: str = "low") -> Any:
    """Booleans that are True with probability p (shape defaults to p's shape)."""
    words = _single_key("bernoulli", key)
    if mode not in ("low", "high"):
        raise ValueError(f"bernoulli: got mode={mode!r}, expected 'high' or 'low'")
    p_dtype = p.dtype if isinstance(p, Array) else np.asarray(p).dtype
    if p_dtype.kind != "f":
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p_dtype}.")
    shape = tuple(np.shape(p)) if shape is None else _shape("bernoulli", shape)
    _check_shape("bernoulli", shape, tuple(np.shape(p)))
    return _sample("bernoulli", shape, np.bool_, words, p=p, shape=shape, mode=mode)


@_sampler("bernoulli")
def _bernoulli_host(words: np.ndarray, p: Any, shape: tuple[int, ...], mode: str
                    ) -> np.ndarray:
    p = _canonical_array(p)
    if mode == "high":
        u1, u2 = _uniform(words, (2, *shape), p.dtype, 0., 1.)
        u2 = u2 * p.dtype.type(2.0 ** -np.finfo(p.dtype).nmant)
        return u2 < p - u1
    return _uniform(words, shape, p.dtype, 0., 1.) < p


def _shuffle(words: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """JAX's shuffle: stable sorts of x along axis by fresh 32-bit keys, enough rounds that
    collisions of sort keys are unlikely (3 * log(size) / log(2**32 - 1) rounds)."""
    rounds = math.ceil(3 * math.log(max(1, x.size)) / math.log(0xFFFFFFFF))
    for _ in range(rounds):
        words, subkey = threefry.split(words, (2,))
        sort_keys = threefry.random_bits(subkey, 32, x.shape)
        order = np.argsort(sort_keys, axis=axis, kind="stable")
        x = np.take_along_axis(x, order, axis=axis)
    return x


def _permutation(words: np.ndarray, x: Any, axis: int, independent: bool) -> np.ndarray:
    if np.ndim(x) == 0:
        x = np.asarray(x)
        if x.dtype.kind not in "iu":
            raise TypeError("permutation: x must be an integer or at least 1-dimensional, "
                            f"got {x.dtype} scalar")
        _axis("permutation", axis, 1)
        return _shuffle(words, np.arange(int(x), dtype=dtypes.DEFAULT_INT), 0)
    x = _canonical_array(x)
    axis = _axis("permutation", axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(words, x, axis)
    order = _shuffle(words, np.arange(x.shape[axis], dtype=np.int32), 0)
    return np.take(x, order, axis=axis)


def permutation(key: KeyLike, x: int | Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of arange(x) (x an int) or of x's slices along `axis`."""
    words = _single_key("permutation", key)
    if not (_is_staged(words) or _is_staged(x)):
        return _wrap(_permutation(words, x, axis, independent))
    if isinstance(x, (int, np.integer)):  # a permutation of range(x)
        return _sample("permutation", (int(x),), dtypes.DEFAULT_INT, words, x=int(x), axis=axis,
                       independent=independent)
    if _is_staged(x) and x.ndim == 0:
        raise TypeError("permutation: the length of a permutation of range(x) must be known "
                        "when compiling; pass x as a static argument")
    x = x if isinstance(x, Array) else as_array(_canonical_array(x))
    return _sample("permutation", x.shape, x.dtype, words, x=x, axis=axis,
                   independent=independent)


@_sampler("permutation")
def _permutation_host(words: np.ndarray, x: Any, axis: int, independent: bool) -> np.ndarray:
    return _permutation(words, x, axis, independent)


def shuffle(key: KeyLike, x: Any, axis: int = 0) -> Any:
    """Deprecated (as in JAX): permutation(key, x, axis, independent=True)."""
    warnings.warn("redraft.random.shuffle is deprecated and will be removed in a future "
                  "release. Use redraft.random.permutation with independent=True.",
                  DeprecationWarning, stacklevel=2)
    words = _single_key("shuffle", key)
    x = _canonical_array(x)
    if x.ndim == 0:
        raise TypeError("shuffle: x must be at least 1-dimensional")
    return _wrap(_shuffle(words, x, _axis("shuffle", axis, x.ndim)))


def _log(x: np.ndarray) -> np.ndarray:
    """log as XLA computes it (float16 through float32; float64 by the C library's log, as
    XLA's CPU backend calls it), for bit-exact samples."""
    if x.dtype == np.float64:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x)
    return threefry.log_float32(x).astype(x.dtype)


def _log1p(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float64:
        return threefry.log1p_float64(x)
    return threefry.log1p_float32(x).astype(x.dtype)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf as XLA computes it in float32; float64 by the C library's erf, never in float32
    (within an ulp or two of XLA's float64 rational, not bit for bit)."""
    if x.dtype == np.float64:
        return np.vectorize(math.erf, otypes=[np.float64])(x)
    return threefry.erf_float32(x).astype(x.dtype)


def _erfinv(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float64:
        return threefry.erfinv_float64(x)
    return threefry.erfinv_float32(x).astype(x.dtype)


def _gumbel(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, mode: str
            ) -> np.ndarray:
    if mode not in ("low", "high"):
        raise ValueError(f"gumbel: mode must be 'low' or 'high', got {mode!r}")
    info = np.finfo(dtype)
    if mode == "high":  # a second uniform fills in the bits below the first one's last
        high, low = _uniform(words, (2, *shape), dtype, 0., 1.)
        step = dtype.type(2.0 ** -info.nmant)
        floor = dtype.type(max(2.0 ** -(2 * info.nmant + 1), float(info.tiny)))
        if dtype == np.float32:
            finer = threefry.fma_float32(step, low, high) + floor
        else:
            finer = high + step * low + floor
        x = np.where(high >= dtype.type(0.5), high, finer)
        return -_log(-_log1p(-x))
    u = _uniform(words, shape, dtype, info.tiny, 1.)
    return -_log(-_log(u))


def gumbel(key: KeyLike, shape: Shape = (), dtype: Any = None, mode: str = "low") -> Any:
    """Standard Gumbel samples, -log(-log(u))."""
    words = _single_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    shape = _shape("gumbel", shape)
    return _sample("gumbel", shape, dtype, words, shape=shape, dtype=dtype.name, mode=mode)


@_sampler("gumbel")
def _gumbel_host(words: np.ndarray, shape: tuple[int, ...], dtype: str, mode: str
                 ) -> np.ndarray:
    return _gumbel(words, shape, np.dtype(dtype), mode)


def _top_k_indices(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values along the last axis, largest first, ties by index."""
    return np.argsort(-values, axis=-1, kind="stable")[..., :k].astype(np.int32)


def _inexact_probabilities(p: Any) -> np.ndarray:
    p = _canonical_array(p)
    return p if p.dtype.kind in "fc" else p.astype(dtypes.DEFAULT_FLOAT)


@_recordable("choice")
def choice(key: KeyLike, a: int | Any, shape: Shape = (), replace: bool = True,
           p: Any = None, axis: int = 0, mode: str = "low") -> Any:
    """Samples from a (or from arange(a) for an int), with or without replacement."""
    words = _single_key("choice", key)
    if not isinstance(shape, (Sequence, np.ndarray)):
        raise TypeError(f"shape argument of choice must be a sequence, got {shape!r}")
    shape = _shape("choice", shape)
    arr = _canonical_array(a)
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"choice: a must be an integer or an array, got {arr.dtype} scalar")
        n_inputs = int(arr)
    else:
        axis = _axis("choice", axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return _wrap(np.zeros(shape, dtype=arr.dtype))
    if n_inputs <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            index = _randint(words, shape, 0, n_inputs, dtypes.DEFAULT_INT)
            result = index if arr.ndim == 0 else np.take(arr, index, axis=axis)
        else:
            population = n_inputs if arr.ndim == 0 else arr
            permuted = _permutation(words, population, axis if arr.ndim else 0, False)
            result = permuted[(slice(None),) * (axis if arr.ndim else 0) + (slice(n_draws),)]
    else:
        p_arr = _inexact_probabilities(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = np.cumsum(p_arr)
            r = p_cuml[-1] * (p_arr.dtype.type(1) - _uniform(words, shape, p_arr.dtype, 0., 1.))
            index = np.searchsorted(p_cuml, r).astype(dtypes.DEFAULT_INT)
        else:
            g = _gumbel(words, (n_inputs,), p_arr.dtype, mode) + _log(p_arr)
            index = _top_k_indices(g, n_draws)
        result = index if arr.ndim == 0 else np.take(arr, index, axis=axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return _wrap(np.reshape(result, out_shape))


@_recordable("truncated_normal")
def truncated_normal(key: KeyLike, lower: Any, upper: Any, shape: Shape | None = None,
                     dtype: Any = None) -> Any:
    """Standard normal samples conditioned on lower < x < upper (inverse-CDF method)."""
    words = _single_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    lower, upper = np.asarray(lower).astype(dtype), np.asarray(upper).astype(dtype)
    if shape is None:
        shape = np.broadcast_shapes(lower.shape, upper.shape)
    else:
        shape = _shape("truncated_normal", shape)
        _check_shape("truncated_normal", shape, lower.shape, upper.shape)
    sqrt2 = dtype.type(np.sqrt(2))
    a = _erf(lower / sqrt2)
    b = _erf(upper / sqrt2)
    u = _uniform(words, shape, dtype, a, b)
    out = sqrt2 * _erfinv(u)
    low = np.nextafter(lower, dtype.type(np.inf))
    high = np.nextafter(upper, dtype.type(-np.inf))
    return _wrap(np.minimum(np.maximum(out, low), high).astype(dtype))


@_recordable("categorical")
def categorical(key: KeyLike, logits: Any, axis: int = -1, shape: Shape | None = None,
                replace: bool = True, mode: str = "low") -> Any:
    """Category indices drawn with probabilities softmax(logits, axis) (Gumbel-max trick)."""
    words = _single_key("categorical", key)
    logits = _canonical_array(logits)
    if logits.dtype.kind != "f":
        raise TypeError(f"categorical: logits must be floating point, got {logits.dtype}")
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    axis = _axis("categorical", axis, logits.ndim)
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape("categorical", shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        axis_from_end = axis - logits.ndim
        sample_shape = list(shape[len(prefix):])
        sample_shape.insert(axis, logits.shape[axis])
        noise = _gumbel(words, (*prefix, *sample_shape), logits.dtype, mode)
        scores = noise + logits.reshape((1,) * len(prefix) + logits.shape)
        return _wrap(np.argmax(scores, axis=axis_from_end).astype(dtypes.DEFAULT_INT))
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    scores = logits + _gumbel(words, logits.shape, logits.dtype, mode)
    indices = _top_k_indices(np.moveaxis(scores, axis, -1), k)
    return _wrap(np.moveaxis(indices, -1, 0).reshape(shape))


@_recordable("orthogonal")
def orthogonal(key: KeyLike, n: int, shape: Shape = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Haar-distributed matrices of shape (*shape, n, m) with orthonormal rows or columns
    (whichever side is smaller): the Q of a normal matrix's QR, its columns' signs fixed by
    R's diagonal (Mezzadri 2007), so the sample is unique for the key."""
    words = _single_key("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    shape = _shape("orthogonal", shape)
    m = n if m is None else int(m)
    n = int(n)
    z = _normal(words, (*shape, max(n, m), min(n, m)), dtype)
    q, r = np.linalg.qr(z)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    x = (q * signs[..., None, :]).astype(dtype)
    return _wrap(np.swapaxes(x, -1, -2) if n < m else x)


# ---- distributions made from uniform and normal samples by XLA-exact elementwise steps -------
# log and log1p go through threefry's float32 versions of XLA's; sqrt and + - * / are IEEE
# exact in both, so each sample is bit-identical with JAX's for the same key.

def _exponential(words: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    u = _uniform(words, shape, dtype, 0., 1.)
    return -_log1p(-u)


def exponential(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Standard exponential samples, -log(1 - u)."""
    words = _single_key("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    shape = _shape("exponential", shape)
    return _sample("exponential", shape, dtype, words, shape=shape, dtype=dtype.name)


@_sampler("exponential")
def _exponential_host(words: np.ndarray, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return _exponential(words, shape, np.dtype(dtype))


@_recordable("laplace")
def laplace(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Standard Laplace samples, sign(u) * log(1 - |u|) for u uniform in (-1, 1)."""
    words = _single_key("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    low = dtype.type(-1.0) + np.finfo(dtype).epsneg
    u = _uniform(words, _shape("laplace", shape), dtype, low, 1.)
    return _wrap((np.sign(u) * _log1p(-np.abs(u))).astype(dtype))


@_recordable("logistic")
def logistic(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """Standard logistic samples, log(u) - log(1 - u)."""
    words = _single_key("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    u = _uniform(words, _shape("logistic", shape), dtype, np.finfo(dtype).tiny, 1.)
    return _wrap((_log(u) - _log1p(-u)).astype(dtype))


@_recordable("rademacher")
def rademacher(key: KeyLike, shape: Shape = (), dtype: Any = None) -> Any:
    """-1 or +1 with equal probability (the default int unless dtype says otherwise): a
    bernoulli(0.5), which draws uniforms in the default float as JAX's does."""
    words = _single_key("rademacher", key)
    dtype = dtypes.DEFAULT_INT if dtype is None else canonicalize(np.dtype(dtype))
    flips = _uniform(words, _shape("rademacher", shape), dtypes.DEFAULT_FLOAT, 0., 1.) < 0.5
    return _wrap((2 * flips.astype(dtype) - 1).astype(dtype))


@_recordable("rayleigh")
def rayleigh(key: KeyLike, scale: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Rayleigh samples, scale * sqrt(-2 log u)."""
    words = _single_key("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    scale = np.asarray(scale)
    if shape is None:
        shape = scale.shape
    else:
        shape = _shape("rayleigh", shape)
        _check_shape("rayleigh", shape, scale.shape)
    u = _uniform(words, shape, dtype, 0., 1.)
    scale = np.broadcast_to(scale.astype(dtype), shape)
    return _wrap((scale * np.sqrt(_log(u) * dtype.type(-2))).astype(dtype))


@_recordable("triangular")
def triangular(key: KeyLike, left: Any, mode: Any, right: Any, shape: Shape | None = None,
               dtype: Any = None) -> Any:
    """Triangular samples on [left, right] peaking at mode, by inverting the CDF."""
    words = _single_key("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    left, mode, right = (np.asarray(v) for v in (left, mode, right))
    if shape is None:
        shape = np.broadcast_shapes(left.shape, mode.shape, right.shape)
    else:
        shape = _shape("triangular", shape)
        _check_shape("triangular", shape, left.shape, mode.shape, right.shape)
    left, mode, right = (np.broadcast_to(v.astype(dtype), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _uniform(words, shape, dtype, 0., 1.)
    out1 = left + np.sqrt(u * (right - left) * (mode - left))
    out2 = right - np.sqrt((dtype.type(1) - u) * (right - left) * (right - mode))
    return _wrap(np.where(u < fc, out1, out2).astype(dtype))
