"""Fusion: elementwise chains and the reductions they feed become `fused` loop nests."""
import numpy as np
import pytest

import redraft
from redraft.compiler.backend import interpret
from redraft.compiler.ir.passes.fusion import fusion
from redraft.compiler.ir.ssa import for_p, fused_p, literal, print_p
from redraft.compiler.ir.verify import IRVerificationError, verify
from redraft.compiler.primitives import elementwise as ew
from redraft.compiler.primitives import linalg, reductions, shape
import redraft.numpy as jnp

from ir_builder import IRBuilder, f32, i32, prims
import ir_functions as F

RNG = np.random.default_rng(1)


def fused_and_checked(fn, *args):
    """fusion(fn), verified, after checking it computes what fn does on `args`."""
    out = verify(fusion(verify(fn)))
    args = [np.asarray(a, np.float32) for a in args]
    for a, e in zip(interpret.run(out, args), interpret.run(fn, args)):
        np.testing.assert_allclose(a, e, rtol=1e-6)
    return out


def test_an_elementwise_chain_is_one_fused_equation():
    b = IRBuilder()
    x = b.param()
    y = b.op(ew.add_p, b.op(ew.mul_p, b.op(ew.exp_p, x), 2.0), 1.0)
    out = fused_and_checked(b.function(y), RNG.random(4))
    (eqn,) = out.body.eqns
    assert eqn.prim is fused_p and eqn.params == {"shape": (4,), "kind": "elementwise"}
    assert prims(eqn.regions[0]) == ["exp", "mul", "add"]
    assert eqn.ins == [x] and eqn.outs == [y]


def test_a_reduction_of_the_chain_is_its_terminal_op():
    b = IRBuilder()
    x = b.param(shape=(3, 5))
    s = b.op(reductions.reduce_sum_p, b.op(ew.exp_p, x), axes=(1,))
    out = fused_and_checked(b.function(s), RNG.random((3, 5)))
    (eqn,) = out.body.eqns
    assert eqn.params == {"shape": (3, 5), "kind": "reduce", "axes": (1,)}
    assert prims(eqn.regions[0]) == ["exp", "reduce_sum"]


def test_a_value_needed_outside_is_an_output_and_blocks_absorption():
    b = IRBuilder()
    x = b.param(shape=(2, 2))
    e = b.op(ew.exp_p, x)
    s = b.op(reductions.reduce_max_p, e, axes=(0, 1))
    d = b.op(linalg.dot_general_p, e, e, dimension_numbers=(((1,), (0,)), ((), ())),
             preferred_element_type=None)
    out = fused_and_checked(b.function(s, d), RNG.random((2, 2)))
    assert prims(out) == ["fused", "fused", "dot_general"]
    chain, reduce = out.body.eqns[:2]
    assert chain.outs == [e] and chain.params["kind"] == "elementwise"
    assert reduce.ins == [e] and reduce.params["kind"] == "reduce"


def test_the_tail_that_feeds_only_a_reduction_splits_off():
    b = IRBuilder()
    x = b.param()
    t = b.op(ew.tanh_p, x)
    s = b.op(reductions.reduce_sum_p, b.op(ew.mul_p, t, t), axes=(0,))
    out = fused_and_checked(b.function(t, s), RNG.random(4))
    chain, reduce = out.body.eqns
    assert prims(chain.regions[0]) == ["tanh"] and chain.outs == [t]
    assert prims(reduce.regions[0]) == ["mul", "reduce_sum"] and reduce.ins == [t]


def test_broadcast_operands_join_the_iteration_space():
    b = IRBuilder()
    x = b.param(shape=(4, 3))
    m = b.param(shape=(3,))
    y = b.op(ew.div_p, b.op(ew.sub_p, x, m), b.op(ew.exp_p, m))
    out = fused_and_checked(b.function(y), RNG.random((4, 3)), RNG.random(3))
    # exp m has shape (3,): its own loop; the (4, 3) chain reads it broadcast
    assert [e.params["shape"] for e in out.body.eqns] == [(3,), (4, 3)]


def test_no_group_that_would_depend_on_itself():
    b = IRBuilder()
    x = b.param()
    a = b.op(ew.exp_p, x)
    s = b.op(reductions.reduce_sum_p, a, axes=(0,))
    y = b.op(ew.div_p, a, s)  # needs the sum of a: cannot share a's loop
    out = fused_and_checked(b.function(y), RNG.random(4))
    assert [e.params["kind"] for e in out.body.eqns] == ["elementwise", "reduce", "elementwise"]


def test_groups_never_form_a_cycle_between_them():
    # a -> reshape -> b and c -> reshape -> d: {a, d} chain; b and c share the input y, but
    # merging them would make {a, d} and {b, c} wait for each other
    b = IRBuilder()
    x = b.param(shape=(4, 3))
    y = b.param(shape=(12,))
    a = b.op(ew.exp_p, x)
    r1 = b.op(shape.reshape_p, a, new_sizes=(12,))
    bb = b.op(ew.add_p, r1, y)
    c = b.op(ew.mul_p, y, 2.0)
    r2 = b.op(shape.reshape_p, c, new_sizes=(4, 3))
    d = b.op(ew.add_p, a, r2)
    fused_and_checked(b.function(bb, d), RNG.random((4, 3)), RNG.random(12))


def test_siblings_reading_one_input_share_a_loop():
    b = IRBuilder()
    x = b.param()
    outs = [b.op(ew.exp_p, x), b.op(ew.sin_p, x), b.op(reductions.reduce_sum_p, x, axes=(0,)),
            b.op(reductions.reduce_max_p, x, axes=(0,))]
    out = fused_and_checked(b.function(*outs), RNG.random(4))
    assert [len(e.outs) for e in out.body.eqns] == [2, 2]


def test_a_reduction_never_feeds_its_own_loop():
    ir = redraft.make_ir(F.logsumexp)(jnp.ones(5))
    for eqn in ir.body.eqns:
        inner = {v.id for e in eqn.regions[0].eqns for v in e.outs}
        assert all(a.id in inner or a in eqn.regions[0].params
                   for e in eqn.regions[0].eqns for a in e.ins if hasattr(a, "id"))
    assert len(ir.body.eqns) == 3


def test_loop_bodies_are_fused_but_not_across_the_loop():
    b = IRBuilder()
    x = b.param()
    before = b.op(ew.exp_p, x)
    _, c = b.open(i32(), f32(4))
    body = b.close(b.op(ew.sub_p, c, b.op(ew.mul_p, c, 0.1)))
    (r,) = b.emit(for_p, [literal(0, np.int32), literal(3, np.int32), before], [f32(4)], [body])
    after = b.op(ew.sin_p, r)
    out = fused_and_checked(b.function(after), RNG.random(4))
    assert prims(out) == ["fused", "for", "fused"]
    assert prims(out.body.eqns[1].regions[0]) == ["fused"]


def test_the_decay_loop_body_is_one_fused_equation():
    ir = redraft.make_ir(F.decay)(jnp.ones(8))
    (loop,) = ir.body.eqns
    assert loop.prim is for_p
    (body,) = loop.regions[0].eqns
    assert body.prim is fused_p and prims(body.regions[0]) == ["mul", "sub"]


def test_effects_keep_their_order():
    b = IRBuilder()
    x = b.param()
    a = b.op(ew.exp_p, x)
    b.emit(print_p, [a], [], [], template="{}")
    s = b.op(reductions.reduce_sum_p, x, axes=(0,))
    b.emit(print_p, [s], [], [], template="{}")
    y = b.op(ew.add_p, a, s)
    out = verify(fusion(b.function(y)))
    printed = [e.ins[0] for e in out.body.eqns if e.prim is print_p]
    assert printed == [a, s]


def test_fusion_does_not_change_its_input():
    b = IRBuilder()
    x = b.param()
    fn = b.function(b.op(ew.sin_p, b.op(ew.exp_p, x)))
    text = str(fn)
    fusion(fn)
    assert str(fn) == text


def test_verify_rejects_a_fused_region_that_reads_outside():
    b = IRBuilder()
    x = b.param()
    fn = fusion(b.function(b.op(ew.exp_p, x)))
    fused = fn.body.eqns[0]
    fused.regions[0].eqns[0].ins[0] = x
    with pytest.raises(IRVerificationError, match="closed"):
        verify(fn)


def test_verify_rejects_a_non_elementwise_fused_body():
    b = IRBuilder()
    x = b.param(shape=(2, 2))
    fn = fusion(b.function(b.op(ew.exp_p, x)))
    region = fn.body.eqns[0].regions[0]
    p = region.params[0]
    t = b.op(shape.transpose_p, p, permutation=(1, 0))
    region.eqns[0] = b.blocks[0].eqns.pop()
    region.eqns[0].ins[0] = p
    region.results[0] = t
    with pytest.raises(IRVerificationError, match="not elementwise"):
        verify(fn)
