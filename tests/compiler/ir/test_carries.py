"""Dead loop carries: a loop stops carrying what nothing after it reads and what it reads only
to compute itself; everything else a loop carries stays."""
import numpy as np

from redraft.compiler.ir.passes.carries import drop_dead_carries
from redraft.compiler.ir.ssa import for_p, literal, print_p, while_p
from redraft.compiler.ir.verify import verify
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import reductions

from ir_builder import IRBuilder, f32, i32, prims


def _for(b, inits, body, n_outs):
    return b.emit(for_p, [literal(0, np.int32), literal(3, np.int32), *inits],
                  [f32(4)] * n_outs, [body])


def test_a_carry_that_only_feeds_itself_and_is_unused_is_dropped():
    b = IRBuilder()
    x = b.param()
    _, c, acc = b.open(i32(), f32(4), f32(4))
    body = b.close(b.op(ew.exp_p, c), b.op(ew.add_p, acc, c))
    r, _ = _for(b, [x, x], body, 2)
    out = verify(drop_dead_carries(b.function(r)))
    (loop,) = out.body.eqns
    assert len(loop.outs) == 1 and len(loop.ins) == 3
    assert len(loop.regions[0].params) == 2 and prims(loop.regions[0]) == ["exp"]


def test_a_carry_read_after_the_loop_stays():
    b = IRBuilder()
    x = b.param()
    _, c, acc = b.open(i32(), f32(4), f32(4))
    body = b.close(b.op(ew.exp_p, c), b.op(ew.add_p, acc, c))
    r, s = _for(b, [x, x], body, 2)
    out = verify(drop_dead_carries(b.function(b.op(ew.add_p, r, s))))
    assert len(out.body.eqns[0].outs) == 2


def test_a_carry_another_carry_reads_stays():
    b = IRBuilder()
    x = b.param()
    _, c, acc = b.open(i32(), f32(4), f32(4))
    body = b.close(b.op(ew.mul_p, c, acc), b.op(ew.add_p, acc, 1.0))
    r, _ = _for(b, [x, x], body, 2)
    out = verify(drop_dead_carries(b.function(r)))
    assert len(out.body.eqns[0].outs) == 2


def test_a_carry_a_print_reads_stays():
    b = IRBuilder()
    x = b.param()
    _, c, acc = b.open(i32(), f32(4), f32(4))
    b.emit(print_p, [acc], [], [], template="{}")
    body = b.close(b.op(ew.exp_p, c), b.op(ew.add_p, acc, 1.0))
    r, _ = _for(b, [x, x], body, 2)
    out = verify(drop_dead_carries(b.function(r)))
    assert len(out.body.eqns[0].outs) == 2


def test_a_while_carry_its_condition_reads_stays_and_one_it_does_not_goes():
    b = IRBuilder()
    x = b.param()
    c, acc, junk = b.open(f32(4), f32(4), f32(4))
    cond = b.close(b.op(reductions.reduce_or_p, b.op(ew.lt_p, acc, 10.0), axes=(0,)))
    c, acc, junk = b.open(f32(4), f32(4), f32(4))
    body = b.close(b.op(ew.exp_p, c), b.op(ew.add_p, acc, 1.0), b.op(ew.sin_p, junk))
    r, _, _ = b.emit(while_p, [x, x, x], [f32(4)] * 3, [cond, body])
    out = verify(drop_dead_carries(b.function(r)))
    (loop,) = out.body.eqns
    assert len(loop.outs) == 2 and len(loop.regions[0].params) == 2
    assert prims(loop.regions[1]) == ["exp", "add"]
