"""The existing primitives' abstract rules against their eager results, and their errors.

Staging and the type-directed transforms trust `abstract_eval` to predict exactly what
`impl` (through `bind`) produces: shape, dtype and weak type. These tests run both on the
same operands for elementwise, reduction, shape and linear-algebra primitives. Known
disagreements are strict xfails: each names the bug, and fails loudly once it is fixed.
"""
import itertools

import numpy as np
import pytest

import redraft.lax as lax
from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives import ALL_PRIMITIVES
from redraft.runtime.array import wrap_host
from redraft.runtime.eager import bind


DTYPES = [np.float32, np.float16, np.int32, np.uint8, np.bool_, np.complex64]
BINARY = {"add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and",
          "or", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic", "eq",
          "ne", "lt", "le", "gt", "ge"}
WITH_PARAMS = {"select", "clamp", "integer_pow", "convert_element_type", "round"}


def sample(dtype, shape, seed=0):
    """Small positive values (every unary function is defined there)."""
    rng = np.random.RandomState(seed)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.asarray(rng.rand(*shape) > 0.5)
    if kind == "c":
        return np.asarray(rng.rand(*shape) + 0.5 + 1j * rng.rand(*shape)).astype(dtype)
    if kind == "f":
        return np.asarray(rng.rand(*shape) * 0.8 + 0.1).astype(dtype)
    return np.asarray(rng.randint(1, 4, shape)).astype(dtype)


def _accepts(name, operands, params) -> bool:
    avals = [ShapedArray(x.shape, x.dtype, weak) for x, weak in operands]
    try:
        abstract_eval_rules[ALL_PRIMITIVES[name]](*avals, **params)
    except (TypeError, ValueError, IndexError):
        return False
    return True


# ---- the cases --------------------------------------------------------------------------

def _elementwise_cases():
    names = [n for n, p in ALL_PRIMITIVES.items()
             if p.family == "elementwise" and n not in WITH_PARAMS]
    for name, dtype, weak in itertools.product(names, DTYPES, (False, True)):
        if name in BINARY:
            for other_weak in (False, True):
                yield name, [(sample(dtype, (2, 3)), weak), (sample(dtype, (3,), 1),
                                                             other_weak)], {}
        else:
            yield name, [(sample(dtype, (2, 3)), weak)], {}


def _parameterised_cases():
    f32, i32, boolean = np.float32, np.int32, np.bool_
    for weak, other in itertools.product((False, True), repeat=2):
        yield "round", [(sample(f32, (3,)), weak)], dict(rounding_method=int(other))
        yield "integer_pow", [(sample(f32, (3,)), weak)], dict(y=3)
        yield "integer_pow", [(sample(i32, (3,)), weak)], dict(y=2)
        yield "convert_element_type", [(sample(f32, (3,)), weak)], dict(
            new_dtype=np.dtype(i32), weak_type=other)
        yield "select", [(sample(boolean, (2, 3)), False), (sample(f32, (3,)), weak),
                         (sample(f32, (1,)), other)], {}
        yield "clamp", [(sample(f32, ()), other), (sample(f32, (2, 3)), weak),
                        (sample(f32, ()), other)], {}


def _reduction_cases():
    for dtype, weak in itertools.product(DTYPES, (False, True)):
        x = [(sample(dtype, (2, 3, 4)), weak)]
        for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
                     "reduce_or"):
            yield name, x, dict(axes=(0, 2))
            yield name, x, dict(axes=())
        for name in ("argmax", "argmin"):
            yield name, x, dict(axis=1, index_dtype=np.dtype(np.int32))
        for name in ("cumsum", "cumprod", "cummax", "cummin"):
            yield name, x, dict(axis=1, reverse=True)
        yield "sort", x, dict(dimension=2)
        yield "argsort", x, dict(dimension=0, descending=True)


def _shape_cases():
    index = (np.asarray(1, np.int32), False)
    for dtype, weak, other in itertools.product((np.float32, np.int32, np.bool_),
                                                (False, True), (False, True)):
        x = (sample(dtype, (2, 3, 4)), weak)
        yield "reshape", [x], dict(new_sizes=(6, 4))
        yield "broadcast_in_dim", [x], dict(shape=(5, 2, 3, 4), broadcast_dimensions=(1, 2, 3))
        yield "transpose", [x], dict(permutation=(2, 0, 1))
        yield "squeeze", [(sample(dtype, (2, 1, 4)), weak)], dict(dimensions=(1,))
        yield "rev", [x], dict(dimensions=(0, 2))
        yield "concatenate", [x, (sample(dtype, (2, 1, 4)), other)], dict(dimension=1)
        yield "pad", [x, (sample(dtype, ()), other)], dict(
            padding_config=((1, 2, 0), (-1, 0, 0), (0, 0, 0)))
        yield "pad", [x, (sample(dtype, ()), other)], dict(
            padding_config=((0, 0, 1), (0, 0, 0), (1, 0, 2)))
        yield "slice", [x], dict(start_indices=(0, 1, 0), limit_indices=(2, 3, 4),
                                 strides=(1, 1, 3))
        yield "dynamic_slice", [x, index, index, index], dict(slice_sizes=(1, 2, 2))
        yield "dynamic_update_slice", [x, (sample(dtype, (1, 2, 2)), other), index, index,
                                       index], {}
        yield "dot_general", [x, (sample(dtype, (4, 3, 5)), other)], dict(
            dimension_numbers=(((2,), (0,)), ((), ())), preferred_element_type=None)
        yield "dot_general", [x, (sample(dtype, (2, 4, 5)), other)], dict(
            dimension_numbers=(((2,), (1,)), ((0,), (0,))), preferred_element_type=None)
    yield "dot_general", [(sample(np.int8, (2, 3)), False), (sample(np.int8, (3, 2)), False)], \
        dict(dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=np.dtype(
            np.int32))
    yield "iota", [], dict(dtype=np.dtype(np.int32), shape=(2, 3), dimension=1)


# ---- known disagreements (strict xfails: fix the primitive, then drop the entry) -------------

def _known_bug(name, operands, params) -> str | None:
    """Why `abstract_eval` and `impl` disagree on this case, for a bug not yet fixed."""
    return None


def _case_params():
    cases = itertools.chain(_elementwise_cases(), _parameterised_cases(), _reduction_cases(),
                            _shape_cases())
    for k, (name, operands, params) in enumerate(cases):
        if not _accepts(name, operands, params):
            continue
        label = ",".join(f"{np.dtype(x.dtype).name}{'~' if w else ''}" for x, w in operands)
        reason = _known_bug(name, operands, params)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(name, operands, params, marks=marks, id=f"{name}-{label}-{k}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("name,operands,params", list(_case_params()))
def test_abstract_eval_predicts_impl(name, operands, params):
    prim = ALL_PRIMITIVES[name]
    aval = abstract_eval_rules[prim](*(ShapedArray(x.shape, x.dtype, w) for x, w in operands),
                                     **params)
    out = bind(prim, *(wrap_host(x, w) for x, w in operands), **params)
    assert (out.shape, out.dtype, out.weak_type) == (aval.shape, aval.dtype, aval.weak_type)


def test_the_sweep_covers_every_primitive_of_these_families():
    covered = {name for name, *_ in itertools.chain(
        _elementwise_cases(), _parameterised_cases(), _reduction_cases(), _shape_cases())}
    families = ("elementwise", "reductions", "shape", "linalg")
    missing = {n for n, p in ALL_PRIMITIVES.items() if p.family in families} - covered
    assert not missing, f"add cases for {sorted(missing)}"


# ---- errors name the shapes, dtypes and axes involved ------------------------------------

def f32(*shape):
    return np.ones(shape, np.float32)


def i32(*shape):
    return np.ones(shape, np.int32)


ERRORS = [
    (lambda: lax.add(f32(3), f32(4)), ValueError, r"lax.add: shapes \(3,\), \(4,\)"),
    (lambda: lax.add(f32(3), i32(3)), TypeError, "float32, int32"),
    (lambda: lax.add(1, 1.0), TypeError, "same dtype"),
    (lambda: lax.sin(i32(3)), TypeError, "lax.sin does not accept dtype int32"),
    (lambda: lax.bitwise_and(f32(3), f32(3)), TypeError, "does not accept dtype float32"),
    (lambda: lax.reshape(f32(2, 3), (4, 2)), TypeError, r"shape \(2, 3\).*into shape \(4, 2\)"),
    (lambda: lax.transpose(f32(2, 3), (0, 0)), ValueError, r"\(0, 0\) is not a permutation"),
    (lambda: lax.squeeze(f32(2, 3), (0,)), ValueError, r"axis 0 of size 2 \(shape \(2, 3\)\)"),
    (lambda: lax.squeeze(f32(2, 3), (5,)), ValueError, "axis 5 is out of range .* rank 2"),
    (lambda: lax.concatenate([f32(2, 3), f32(3, 2)], 0), TypeError,
     r"\[\(2, 3\), \(3, 2\)\] differ outside dimension 0"),
    (lambda: lax.concatenate([f32(2, 3), i32(2, 3)], 0), TypeError, "float32, int32"),
    (lambda: lax.pad(f32(2, 3), np.float32(0), ((1, 1, 0),)), ValueError, "1 entries .* rank 2"),
    (lambda: lax.pad(f32(2, 3), f32(2), ((1, 1, 0), (0, 0, 0))), TypeError,
     r"scalar, got shape \(2,\)"),
    (lambda: lax.slice(f32(2, 3), (0, 0), (3, 3)), IndexError, r"out of bounds for shape \(2, 3\)"),
    (lambda: lax.slice(f32(2, 3), (0,), (1,)), TypeError, r"need 2 .* shape \(2, 3\)"),
    (lambda: lax.dynamic_slice(f32(2, 3), (0, 0), (3, 3)), TypeError,
     r"slice sizes \(3, 3\) do not fit shape \(2, 3\)"),
    (lambda: lax.dynamic_slice(f32(2, 3), (0.5, 0), (1, 1)), TypeError, "integer scalars"),
    (lambda: lax.dynamic_update_slice(f32(2, 3), f32(3, 3), (0, 0)), TypeError,
     r"update of shape \(3, 3\) does not fit operand of shape \(2, 3\)"),
    (lambda: lax.broadcast_in_dim(f32(2, 3), (4, 3), (0, 1)), TypeError,
     r"cannot broadcast shape \(2, 3\) to \(4, 3\)"),
    (lambda: lax.dot_general(f32(2, 3), f32(4, 5), (((1,), (0,)), ((), ()))), TypeError,
     r"\(2, 3\) and \(4, 5\) disagree .* \(3 != 4\)"),
    (lambda: lax.dot(f32(2, 3, 4), f32(4)), TypeError, r"rank 1 or 2, got shapes \(2, 3, 4\)"),
    (lambda: lax.reduce_sum(f32(2, 3), (2,)), ValueError, "axis 2 is out of range .* rank 2"),
    (lambda: lax.argmax(np.ones(3, np.complex64), 0), TypeError, "dtype complex64"),
    (lambda: lax.cumsum(f32(2, 3), 2), ValueError, "axis 2 is out of range"),
    (lambda: lax.select(f32(3), f32(3), f32(3)), TypeError, "bool predicate, got float32"),
    (lambda: lax.clamp(f32(2), f32(3), f32(2)), ValueError, r"\(2,\), \(3,\), \(2,\)"),
    (lambda: lax.broadcasted_iota(np.int32, (2, 3), 2), ValueError, "axis 2 is out of range"),
    (lambda: lax.convert_element_type(f32(3), "foo"), TypeError, "'foo' is not a valid dtype"),
    (lambda: lax.expand_dims(f32(2, 3), (4,)), ValueError, "axis 4 is out of range .* rank 3"),
]


@pytest.mark.parametrize("call,error,words", ERRORS)
def test_errors_name_what_is_wrong(call, error, words):
    with pytest.raises(error, match=words):
        call()


# ---- lax-level bugs, strict xfails ----------------------------------------------------------

def test_select_with_a_bool_predicate():
    out = lax.select(np.array([True, False]), f32(2), np.zeros(2, np.float32))
    assert np.asarray(out).tolist() == [1.0, 0.0]


def test_pad_with_interior_padding():
    out = lax.pad(np.arange(3, dtype=np.float32), np.float32(0), ((0, 0, 1),))
    assert np.asarray(out).tolist() == [0, 0, 1, 0, 2]


def test_reduce_max_of_nothing_is_minus_infinity():
    assert float(lax.reduce_max(np.zeros(0, np.float32), (0,))) == -np.inf


def test_reduce_max_error_says_real():
    with pytest.raises(TypeError, match="real"):
        lax.reduce_max(np.ones(3, np.complex64), (0,))
