"""Constant folding: literal-only equations become literals; exact identities disappear."""
import numpy as np

import redraft
from redraft.compiler.ir.passes.fold import MAX_GROWN_ELEMENTS, fold
from redraft.compiler.ir.ssa import Literal, for_p, literal, print_p
from redraft.compiler.ir.verify import verify
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import reductions, shape
import redraft.numpy as jnp

from ir_builder import IRBuilder, f32, i32, prims
import ir_functions as F


def test_literal_operands_are_evaluated_through_a_chain():
    b = IRBuilder()
    x = b.param()
    two = b.op(ew.add_p, 1.0, 1.0)
    e = b.op(ew.exp_p, two)
    y = b.op(ew.mul_p, x, e)
    out = verify(fold(b.function(y)))
    assert prims(out) == ["mul"]
    folded = out.body.eqns[0].ins[1]
    assert isinstance(folded, Literal) and folded.aval == f32()
    np.testing.assert_allclose(folded.value, np.exp(np.float32(2.0)))


def test_a_folded_result_can_be_the_function_result():
    b = IRBuilder()
    b.param()
    s = b.op(reductions.reduce_prod_p, literal(np.array([3, 4], np.int32)), axes=(0,))
    out = verify(fold(b.function(s)))
    assert out.body.eqns == [] and out.results[0].value == 12


def test_large_results_and_broadcasts_stay_computed():
    b = IRBuilder()
    x = b.param()
    big = b.op(shape.broadcast_in_dim_p, literal(np.float32(0)), shape=(MAX_GROWN_ELEMENTS + 1,),
               broadcast_dimensions=())
    small = b.op(shape.broadcast_in_dim_p, literal(np.float32(0)), shape=(4,),
                 broadcast_dimensions=())
    out = verify(fold(b.function(b.op(ew.add_p, x, small), big)))
    assert prims(out) == ["broadcast_in_dim", "add"]


def test_an_equation_whose_rule_raises_is_left_for_run_time():
    b = IRBuilder()
    b.param()
    bad = b.op(ew.integer_pow_p, literal(np.int32(2)), y=-1)
    out = verify(fold(b.function(bad)))
    assert prims(out) == ["integer_pow"]


def test_prints_and_loops_are_never_folded():
    b = IRBuilder()
    x = b.param()
    b.emit(print_p, [literal(np.float32(1))], [], [], template="{}")
    _, c = b.open(i32(), f32())
    body = b.close(c)
    (r,) = b.emit(for_p, [literal(0, np.int32), literal(3, np.int32), literal(np.float32(1))],
                  [f32()], [body])
    out = verify(fold(b.function(x, r)))
    assert prims(out) == ["debug_print", "for"]


def test_equations_inside_regions_are_folded():
    b = IRBuilder()
    x = b.param()
    _, c = b.open(i32(), f32(4))
    k = b.op(ew.mul_p, 2.0, 3.0)
    body = b.close(b.op(ew.add_p, c, k))
    (r,) = b.emit(for_p, [literal(0, np.int32), literal(3, np.int32), x], [f32(4)], [body])
    out = verify(fold(b.function(r)))
    (loop,) = out.body.eqns
    assert prims(loop.regions[0]) == ["add"]
    assert loop.regions[0].eqns[0].ins[1].value == 6.0


def test_times_one_and_same_type_conversion_are_dropped():
    b = IRBuilder()
    x = b.param()
    y = b.op(ew.mul_p, x, 1.0)
    z = b.op(ew.mul_p, literal(np.ones(4, np.float32)), y)
    w = b.op(ew.convert_element_type_p, z, new_dtype=np.dtype(np.float32), weak_type=False)
    out = verify(fold(b.function(w)))
    assert out.body.eqns == [] and out.results == [x]


def test_identities_that_change_a_type_or_are_inexact_stay():
    b = IRBuilder()
    x = b.param()
    s = b.param(shape=())
    c = b.param(dtype=np.complex64)
    widened = b.op(ew.mul_p, s, literal(np.ones(4, np.float32)))  # shape () -> (4,)
    plus_zero = b.op(ew.add_p, x, 0.0)  # -0.0 + 0.0 is +0.0
    complex_one = b.op(ew.mul_p, c, literal(np.complex64(1)))  # inf * (1+0j) has a NaN part
    weak = b.op(ew.convert_element_type_p, b.param(weak=True), new_dtype=np.dtype(np.float32),
                weak_type=False)
    to_int = b.op(ew.convert_element_type_p, x, new_dtype=np.dtype(np.int32), weak_type=False)
    out = verify(fold(b.function(widened, plus_zero, complex_one, weak, to_int)))
    assert prims(out) == ["mul", "add", "mul", "convert_element_type", "convert_element_type"]


def test_fold_does_not_change_its_input():
    b = IRBuilder()
    x = b.param()
    fn = b.function(b.op(ew.mul_p, x, b.op(ew.add_p, 1.0, 1.0)))
    text = str(fn)
    fold(fn)
    assert str(fn) == text


def test_shape_arithmetic_folds_at_compile_time():
    ir = redraft.make_ir(F.shape_arithmetic)(jnp.ones((3, 4)))
    assert prims(ir) == ["reshape"]


def test_constants_fold_into_one_literal():
    ir = redraft.make_ir(F.constants)(jnp.ones(4))
    (fused,) = ir.body.eqns
    (mul,) = fused.regions[0].eqns
    np.testing.assert_array_equal(mul.ins[1].value, [1.0, 3.0, 5.0, 7.0])


def test_a_large_broadcast_of_one_value_reaches_elementwise_readers_as_a_scalar():
    # a gradient's zero accumulator: zeros_like(W) + dW, too large to fold into a literal
    b = IRBuilder()
    x = b.param(shape=(MAX_GROWN_ELEMENTS + 1,))
    zeros = b.op(shape.broadcast_in_dim_p, literal(np.float32(0)),
                 shape=(MAX_GROWN_ELEMENTS + 1,), broadcast_dimensions=())
    total = b.op(ew.add_p, zeros, x)
    out = verify(fold(b.function(total)))
    add = [e for e in out.body.eqns if e.prim is ew.add_p][0]
    assert isinstance(add.ins[0], Literal) and add.ins[0].aval == f32()
    assert add.ins[1] is x  # `0 + x` itself stays: -0.0 + 0.0 is +0.0


def test_a_broadcast_read_by_no_full_sized_operand_stays():
    b = IRBuilder()
    b.param()
    n = MAX_GROWN_ELEMENTS + 1
    ones = b.op(shape.broadcast_in_dim_p, literal(np.float32(1)), shape=(n,),
                broadcast_dimensions=())
    twos = b.op(ew.add_p, ones, ones)  # the result's shape must come from an operand
    out = verify(fold(b.function(twos)))
    add = [e for e in out.body.eqns if e.prim is ew.add_p][0]
    assert add.ins == [ones, ones]


def test_zero_accumulators_keep_signed_zeros_and_values():
    def step(w, g):
        acc = jnp.zeros_like(w)
        acc = acc + g
        acc = jnp.zeros_like(w) + acc
        return w - 0.5 * acc
    w = jnp.asarray(np.linspace(-1, 1, 4096, dtype=np.float32))
    g = jnp.asarray(np.where(np.arange(4096) % 2, -0.0, 0.25).astype(np.float32))
    got, want = np.asarray(redraft.jit(step)(w, g)), np.asarray(step(w, g))
    assert got.tobytes() == want.tobytes()
    ir = str(redraft.make_ir(step)(w, g))
    assert "broadcast_in_dim" not in ir  # the zeros are a literal inside the loop nest
