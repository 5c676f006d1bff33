"""Dead-code elimination: what nothing reads goes, effects stay."""
import numpy as np

import redraft
from redraft.compiler import driver
from redraft.compiler.ir.passes.dce import dce
from redraft.compiler.ir.ssa import for_p, literal, print_p, while_p
from redraft.compiler.ir.verify import verify
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import reductions
import redraft.numpy as jnp

from ir_builder import IRBuilder, f32, i32, prims
import ir_functions as F


def test_unused_equations_are_removed_transitively():
    b = IRBuilder()
    x = b.param()
    dead = b.op(ew.exp_p, b.op(ew.sin_p, x))
    b.op(ew.mul_p, dead, 2.0)
    live = b.op(ew.cos_p, x)
    out = verify(dce(b.function(live)))
    assert prims(out) == ["cos"]


def test_prints_stay_and_keep_what_they_read():
    b = IRBuilder()
    x = b.param()
    shown = b.op(ew.exp_p, x)
    b.emit(print_p, [shown], [], [], template="{}")
    out = verify(dce(b.function(x)))
    assert prims(out) == ["exp", "debug_print"]


def test_a_loop_with_a_print_stays_even_if_unused():
    b = IRBuilder()
    x = b.param()
    _, c = b.open(i32(), f32(4))
    b.emit(print_p, [c], [], [], template="{}")
    body = b.close(c)
    b.emit(for_p, [literal(0, np.int32), literal(2, np.int32), x], [f32(4)], [body])
    out = verify(dce(b.function(x)))
    assert prims(out) == ["for"]


def test_an_unused_pure_loop_is_removed_whole():
    b = IRBuilder()
    x = b.param()
    _, c = b.open(i32(), f32(4))
    body = b.close(b.op(ew.exp_p, c))
    b.emit(for_p, [literal(0, np.int32), literal(2, np.int32), x], [f32(4)], [body])
    out = verify(dce(b.function(x)))
    assert out.body.eqns == []


def test_regions_are_cleaned_but_keep_their_carried_values():
    b = IRBuilder()
    x = b.param()
    _, c, unused = b.open(i32(), f32(4), f32(4))
    b.op(ew.sin_p, c)  # dead inside the body
    body = b.close(b.op(ew.exp_p, c), unused)
    r, _ = b.emit(for_p, [literal(0, np.int32), literal(2, np.int32), x, x], [f32(4), f32(4)],
                  [body])
    out = verify(dce(b.function(r)))
    (loop,) = out.body.eqns
    assert prims(loop.regions[0]) == ["exp"]
    assert len(loop.regions[0].params) == 3 and len(loop.outs) == 2


def test_values_read_only_inside_a_region_are_live():
    b = IRBuilder()
    x = b.param()
    scale = b.op(ew.exp_p, x)
    (c,) = b.open(f32(4))
    cond = b.close(b.op(reductions.reduce_or_p, b.op(ew.lt_p, c, scale), axes=(0,)))
    (c,) = b.open(f32(4))
    body = b.close(b.op(ew.add_p, c, 1.0))
    (r,) = b.emit(while_p, [x], [f32(4)], [cond, body])
    out = verify(dce(b.function(r)))
    assert prims(out) == ["exp", "while"]


def test_staging_probe_of_a_while_condition_is_removed():
    staged, _ = driver.stage(F.grow_until_large, (jnp.ones(4),), set())
    assert prims(staged)[:2] == ["reduce_sum", "lt"]  # evaluated once before the loop
    ir = redraft.make_ir(F.grow_until_large)(jnp.ones(4))
    assert prims(ir) == ["while"]


def test_unused_primal_of_a_gradient_is_removed():
    staged, _ = driver.stage(F.sum_logistic_grad, (jnp.ones(4),), set())
    assert "reduce_sum" in prims(staged)
    assert "reduce_sum" not in prims(dce(staged))
