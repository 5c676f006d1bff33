"""Buffer reuse: which dead, owned operand buffers each result may be written into."""
import numpy as np

import redraft
from redraft.compiler.ir.passes.fusion import fusion
from redraft.compiler.ir.passes.reuse import reuse
from redraft.compiler.ir.ssa import cond_p, for_p, literal, walk_eqns, while_p
from redraft.compiler.ir.verify import verify
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import reductions, shape
import redraft.numpy as jnp

from ir_builder import IRBuilder, f32, i32
import ir_functions as F
from ir_inplace import run_in_place


def donations(eqn):
    return list(zip(eqn.params.get("_donate", ()), eqn.params.get("_donate_into", ())))


def test_a_dead_temporary_is_donated_but_never_a_parameter():
    b = IRBuilder()
    x = b.param()
    e = b.op(ew.exp_p, x)
    s = b.op(ew.sin_p, e)
    c = b.op(ew.cos_p, s)
    out = verify(reuse(b.function(c)))
    assert [donations(e) for e in out.body.eqns] == [[], [(0, 0)], [(0, 0)]]


def test_a_value_read_later_or_returned_is_not_donated():
    b = IRBuilder()
    x = b.param()
    e = b.op(ew.exp_p, x)
    s = b.op(ew.sin_p, e)
    t = b.op(ew.add_p, s, e)
    out = verify(reuse(b.function(t, s)))
    assert [donations(e) for e in out.body.eqns] == [[], [], [(1, 0)]]


def test_only_a_matching_type_is_donated():
    b = IRBuilder()
    x = b.param(shape=(3, 2))
    e = b.op(ew.exp_p, x)
    gt = b.op(ew.gt_p, e, 0.5)  # bool result: cannot live in e's buffer
    s = b.op(reductions.reduce_sum_p, b.op(ew.exp_p, x), axes=(0,))  # smaller, not in place
    out = verify(reuse(b.function(gt, s)))
    assert all(donations(e) == [] for e in out.body.eqns)


def test_an_operand_read_twice_is_donated_once():
    b = IRBuilder()
    x = b.param()
    e = b.op(ew.exp_p, x)
    out = verify(reuse(b.function(b.op(ew.mul_p, e, e))))
    assert donations(out.body.eqns[1]) == [(0, 0)]


def test_a_view_keeps_its_base_alive():
    b = IRBuilder()
    x = b.param(shape=(6,))
    e = b.op(ew.exp_p, x)
    r = b.op(shape.reshape_p, e, new_sizes=(2, 3))  # a backend may make it a view of e
    s = b.op(ew.sin_p, e)
    out = verify(reuse(b.function(r, s)))
    assert all(donations(e) == [] for e in out.body.eqns)
    assert run_in_place(out, [np.zeros(6, np.float32)])[0].tolist() == [[1.0] * 3] * 2


def test_a_branch_result_keeps_what_it_may_be_alive():
    b = IRBuilder()
    x = b.param()
    e = b.op(ew.exp_p, x)
    pred = b.op(reductions.reduce_or_p, b.op(ew.gt_p, x, 0.0), axes=(0,))
    b.open()
    then = b.close(e)  # the branch result is e's buffer
    b.open()
    other = b.close(b.op(ew.neg_p, x))
    (c,) = b.emit(cond_p, [pred], [f32(4)], [then, other])
    s = b.op(ew.sin_p, e)
    out = verify(reuse(b.function(b.op(ew.add_p, s, c))))
    assert donations(out.body.eqns[-2]) == []  # sin may not overwrite e while c is needed
    args = [np.ones(4, np.float32)]
    np.testing.assert_allclose(run_in_place(out, args)[0], np.sin(np.e) + np.e, rtol=1e-6)


def test_an_indexed_update_writes_into_its_dead_operand():
    b = IRBuilder()
    x = b.param()
    e = b.op(ew.exp_p, x)
    u = b.op(shape.dynamic_update_slice_p, e, literal(np.zeros(2, np.float32)),
             literal(np.int32(1)))
    out = verify(reuse(b.function(u)))
    assert donations(out.body.eqns[1]) == [(0, 0)]


def test_the_decay_loop_writes_its_carry_in_place_after_one_copy():
    ir = redraft.make_ir(F.decay)(jnp.ones(8))
    (loop,) = ir.body.eqns
    assert loop.params["_writes_carry"] == (0,)
    assert donations(loop) == []  # its init is the caller's array: the loop copies it once
    (body,) = loop.regions[0].eqns
    assert donations(body) == [(0, 0)]


def test_a_loop_takes_over_a_dead_init_it_owns():
    ir = redraft.make_ir(F.nested_loops)(jnp.ones(8))
    (outer,) = ir.body.eqns
    (inner,) = outer.regions[0].eqns
    assert outer.params["_writes_carry"] == (0,) and donations(outer) == []
    assert inner.params["_writes_carry"] == (0,) and donations(inner) == [(2, 0)]


def test_a_carry_that_yields_an_outer_or_passed_value_is_not_written():
    ir = redraft.make_ir(F.loop_yields_outer)(jnp.ones(3), jnp.ones(3))
    (loop,) = ir.body.eqns
    assert "_writes_carry" not in loop.params
    assert all(donations(e) == [] for e in walk_eqns(loop.regions[0]))


def test_an_init_read_inside_the_loop_is_not_taken_over():
    b = IRBuilder()
    x = b.param()
    e = b.op(ew.exp_p, x)
    _, c = b.open(i32(), f32(4))
    body = b.close(b.op(ew.add_p, c, e))
    (r,) = b.emit(for_p, [literal(0, np.int32), literal(3, np.int32), e], [f32(4)], [body])
    fn = verify(reuse(fusion(b.function(r))))
    loop = fn.body.eqns[1]
    assert loop.params["_writes_carry"] == (0,) and donations(loop) == []
    args = [np.arange(4, dtype=np.float32)]
    np.testing.assert_allclose(run_in_place(fn, args)[0], np.exp(args[0]) * 4, rtol=1e-6)


def test_a_while_loop_writes_carries_after_its_condition_read_them():
    ir = redraft.make_ir(F.halve_until_small)(jnp.ones(8))
    (loop,) = ir.body.eqns
    assert loop.prim is while_p and loop.params["_writes_carry"] == (0, 1)
    assert all(donations(e) == [] for e in loop.regions[0].eqns)


def test_reduce_loops_never_write_in_place():
    ir = redraft.make_ir(F.norm)(jnp.ones((4, 3)))
    for eqn in ir.body.eqns:
        if eqn.params.get("kind") == "reduce":
            assert donations(eqn) == []


def test_reuse_is_idempotent():
    ir = redraft.make_ir(F.nested_loops)(jnp.ones(8))
    again = reuse(ir)
    params = [e.params for e in walk_eqns(ir.body)]
    assert [e.params for e in walk_eqns(again.body)] == params
