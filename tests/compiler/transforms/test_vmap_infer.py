"""Batch-type inference (compiler/transforms/batch/infer.py) is an analysis of its own: it
finds every name's batch type without rewriting, and the rewriter reads what it found.

Checked here: the types it finds for control flow (loops carry types round, a batched `if`
or `while` batches what its branches assign, a tape carried by a batched `while` needs a
loop over the examples), that the declared kinds of rule state their type without being
run, and that its result agrees with the rewritten function's for the vmap catalogue."""
import pytest

import redraft.numpy as jnp
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch import batching
from redraft.compiler.transforms.batch.infer import (NeedsExampleLoop, batch_core_of, infer,
                                                     result_type)
from redraft.compiler.transforms.batch.vmap import vmap_function
from redraft.compiler.primitives.registry import BATCH_RULES

from vmap_catalogue import CASES


def carried(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + x * i
    return acc


def branches(x):
    y = 1.0
    if jnp.sum(x) > 0:
        y = jnp.sin(x)
    return y


def pair(x):
    return x, 2.0


def elementwise_only(x):
    return jnp.exp(jnp.sin(x))  # operations of the elementwise family, a declared kind


def types_of(fn, *in_types):
    core = batch_core_of(fn)
    return core, infer(core, in_types)


def test_a_loop_carries_the_batch_type_round():
    core, found = types_of(carried, bt.B, bt.U)
    assert found.result is bt.B
    assert [found.types[n] for n in core.params] == [bt.B, bt.U]


def test_a_batched_condition_batches_what_the_branches_assign():
    _, found = types_of(branches, bt.B)
    assert found.result is bt.B


def test_unbatched_arguments_give_an_unbatched_result():
    _, found = types_of(branches, bt.U)
    assert found.result is bt.U
    assert all(t is bt.U for t in found.types.values())


def test_a_tuple_result_is_typed_item_by_item():
    assert result_type(batch_core_of(pair), (bt.B,)) == bt.Tuple(bt.B, bt.U)


def test_declared_kinds_state_their_type_without_building_a_rule(monkeypatch):
    def refuse(spec):
        raise AssertionError(f"the analysis built the rule of {spec}")
    stated = []

    def stating(state):
        return lambda spec, b: stated.append(b.path) or state(spec, b)
    monkeypatch.setattr(batching, "built_rule", refuse)
    monkeypatch.setattr(batching, "_BUILT", {})
    monkeypatch.setattr(batching, "RESULT_TYPES", {
        kind: stating(state) for kind, state in batching.RESULT_TYPES.items()})
    _, found = types_of(elementwise_only, bt.B)
    assert found.result is bt.B
    assert set(stated) == {"jnp.sin", "jnp.exp"}  # once per round


def test_every_declared_kind_states_its_result_type():
    kinds = {type(e.rule) for e in BATCH_RULES.values() if e.kind == "rule"
             and not callable(e.rule)}
    assert kinds and kinds <= set(batching.RESULT_TYPES)


def test_a_tape_carried_by_a_batched_while_needs_a_loop_over_examples():
    from redraft.compiler.core import ir
    from redraft.compiler.transforms.runtime import ad

    origin = ("<test>", 1)
    tape = ir.Var("tape")
    # tape = ad.push(tape, x) while x > 0 (batched): examples would push different counts
    fn = ir.Function("f", ("x", "tape"), [
        ir.While([ir.Assign(("c",), ir.Call(ir.Ref(jnp.greater, "jnp.greater"),
                                            (ir.Var("x"), ir.Const(0.0))), origin)],
                 ir.Var("c"),
                 [ir.Assign(("tape",), ir.Call(ir.Ref(ad.push, "ad.push"),
                                               (tape, ir.Var("x"))), origin)], origin),
        ir.Return(tape, origin)], (), "<test>", 1, None, ir.FunctionMeta())
    with pytest.raises(NeedsExampleLoop):
        infer(fn, (bt.B, bt.Tape(bt.U)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_analysis_agrees_with_the_rewritten_function(case):
    from redraft.compiler.transforms.batch.vmap_wrapper import spec_type
    from redraft.compiler.transforms.calls.custom import is_custom
    if is_custom(case.fn) or not hasattr(case.fn, "__code__"):
        pytest.skip("not a plain function")
    core = batch_core_of(case.fn)
    specs = case.in_axes if isinstance(case.in_axes, (tuple, list)) else (
        (case.in_axes,) * len(case.args))
    if len(specs) != len(core.params):
        pytest.skip("defaults or *args")
    types = tuple(spec_type(s, bt.TREE) for s in specs)
    try:
        expected = infer(core, types).result
    except NeedsExampleLoop:
        pytest.skip("batched by a loop over the examples")
    assert vmap_function(core, types).meta.out_type == expected
