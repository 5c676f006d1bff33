"""Common-subexpression elimination: one computation per pure expression and scope."""
import numpy as np

import redraft
from redraft.compiler.ir.passes.cse import cse
from redraft.compiler.ir.ssa import cond_p, for_p, literal, print_p
from redraft.compiler.ir.verify import verify
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import reductions
import redraft.numpy as jnp

from ir_builder import IRBuilder, f32, i32, prims
import ir_functions as F


def test_repeated_expressions_are_computed_once():
    b = IRBuilder()
    x = b.param()
    y1 = b.op(ew.mul_p, b.op(ew.sin_p, x), 2.0)
    y2 = b.op(ew.mul_p, b.op(ew.sin_p, x), 2.0)
    out = verify(cse(b.function(b.op(ew.add_p, y1, y2), y2)))
    assert prims(out) == ["sin", "mul", "add"]
    add = out.body.eqns[2]
    assert add.ins[0] is add.ins[1] is out.results[1]


def test_different_params_or_literals_are_different_expressions():
    b = IRBuilder()
    x = b.param(shape=(2, 3))
    r0 = b.op(reductions.reduce_sum_p, x, axes=(0,))
    r1 = b.op(reductions.reduce_sum_p, x, axes=(1,))
    m2 = b.op(ew.mul_p, x, 2.0)
    m3 = b.op(ew.mul_p, x, 3.0)
    m2i = b.op(ew.mul_p, x, literal(np.float32(2.0), weak=True))
    zero = b.op(ew.add_p, x, literal(np.float32(0.0)))
    neg_zero = b.op(ew.add_p, x, literal(np.float32(-0.0)))
    out = verify(cse(b.function(r0, r1, m2, m3, m2i, zero, neg_zero)))
    assert len(out.body.eqns) == 7


def test_params_of_different_types_never_match():
    b = IRBuilder()
    x = b.param(dtype=np.int32)
    p1 = b.op(ew.integer_pow_p, x, y=1)
    p2 = b.op(ew.integer_pow_p, x, y=True)
    c1 = b.op(ew.convert_element_type_p, x, new_dtype=np.dtype(np.float32), weak_type=False)
    c2 = b.op(ew.convert_element_type_p, x, new_dtype=np.dtype(np.float32), weak_type=False)
    out = verify(cse(b.function(p1, p2, c1, c2)))
    assert prims(out) == ["integer_pow", "integer_pow", "convert_element_type"]


def test_an_outer_value_is_reused_inside_a_loop_body():
    b = IRBuilder()
    x = b.param()
    outside = b.op(ew.exp_p, x)
    _, c = b.open(i32(), f32(4))
    inside = b.op(ew.exp_p, x)
    body = b.close(b.op(ew.add_p, c, inside))
    (r,) = b.emit(for_p, [literal(0, np.int32), literal(3, np.int32), outside], [f32(4)], [body])
    out = verify(cse(b.function(r)))
    loop = out.body.eqns[1]
    assert prims(loop.regions[0]) == ["add"]
    assert loop.regions[0].eqns[0].ins[1] is outside


def test_sibling_regions_and_later_code_do_not_share_a_region_value():
    b = IRBuilder()
    x = b.param()
    pred = b.op(reductions.reduce_or_p, b.op(ew.gt_p, x, 0.0), axes=(0,))
    b.open()
    then = b.close(b.op(ew.exp_p, x))
    b.open()
    other = b.close(b.op(ew.exp_p, x))
    (r,) = b.emit(cond_p, [pred], [f32(4)], [then, other])
    after = b.op(ew.exp_p, x)
    out = verify(cse(b.function(r, after)))
    cond = out.body.eqns[2]
    assert [prims(region) for region in cond.regions] == [["exp"], ["exp"]]
    assert prims(out)[-1] == "exp"


def test_effects_are_never_merged():
    b = IRBuilder()
    x = b.param()
    b.emit(print_p, [x], [], [], template="{}")
    b.emit(print_p, [x], [], [], template="{}")
    out = verify(cse(b.function(x)))
    assert prims(out) == ["debug_print", "debug_print"]


def test_a_function_called_twice_with_one_argument_computes_once():
    ir = redraft.make_ir(F.repeated)(jnp.ones(3))
    body = ir.body.eqns[0].regions[0]
    assert prims(body) == ["sin", "mul", "add"]
