"""Every operation has a batching entry (a rule, a loop with its reason, its own source, or a
reason it cannot batch), and every helper batched code calls can itself be batched again
(nested vmap) and differentiated (grad of vmap)."""
import inspect
import typing

import redraft.compiler.transforms.ad.rules  # noqa: F401  (registers the AD rules)
from redraft.compiler.frontend.normalize import lower_function
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch import vmap  # noqa
from redraft.compiler.transforms.runtime import vm
from redraft.compiler.transforms.batch.rules.products import batched_subscripts
from redraft.compiler.transforms.batch.batching import BATCH_RULES, batch_entry
from redraft.compiler.primitives.registry import RULES, rules_for

import redraft.numpy as jnp
from redraft import lax

# redraft.numpy's module namespace also holds the names its files import for themselves
NOT_API = {"as_array", "binary_binder", "unary_binder", "bind", "wrap_host", "host_array",
           "canonical_axes", "canonical_axis"}


def _public_functions(module) -> dict:
    """Its public functions (not classes, modules, or type aliases such as
    lax.DotDimensionNumbers, which are callable but annotate rather than compute)."""
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and callable(v)
            and not inspect.isclass(v) and not inspect.ismodule(v)
            and typing.get_origin(v) is None}


def _name(op) -> str:
    return f"{getattr(op, '__module__', '?')}.{getattr(op, '__qualname__', repr(op))}"


def test_every_differentiable_operation_has_a_batching_entry():
    missing = sorted({_name(r.op) for r in RULES.values() if batch_entry(r.op) is None})
    assert not missing, f"no batching rule for: {missing}"


def test_every_lax_function_has_a_batching_entry():
    missing = sorted(k for k, v in _public_functions(lax).items() if batch_entry(v) is None)
    assert not missing, f"no batching rule for lax.{missing}"


def test_every_numpy_function_has_a_batching_entry():
    missing = sorted(k for k, v in _public_functions(jnp).items()
                     if k not in NOT_API and batch_entry(v) is None)
    assert not missing, f"no batching rule for jnp.{missing}"


def test_deliberate_gaps_say_why():
    for entry in BATCH_RULES.values():
        if entry.kind in ("loop", "unbatchable"):
            assert entry.reason, f"{_name(entry.op)} is a {entry.kind} without a reason"


def test_every_helper_batched_code_calls_batches_again_and_differentiates():
    """Nested vmap needs a batching entry; grad of vmap needs AD rules (or a nondiff mark),
    or source AD can read (the helpers written in plain redraft.numpy)."""
    for name, fn in vars(vm).items():
        if not inspect.isfunction(fn) or name.startswith("_"):
            continue
        entry = batch_entry(fn)
        assert entry is not None, f"vm.{name} has no batching entry"
        if entry.kind == "source":
            lower_function(fn)  # both vmap and AD read it
        else:
            assert rules_for(fn) is not None, f"vm.{name} has no AD rules"


def test_helpers_that_count_batch_axes_count_one_more_when_nested():
    from redraft.compiler.core import ir
    from redraft.compiler.transforms.batch.batching import RuleCall
    call = ir.Call(ir.Ref(vm.shape, "vm.shape"), (ir.Var("x"), ir.Const(1)))

    class Ctx:
        names = None
        constants: dict = {}  # noqa: RUF012

        def type_of(self, a):
            return bt.B if isinstance(a, ir.Var) else bt.U

    rule = batch_entry(vm.shape).rule
    expr, t = rule(RuleCall(Ctx(), call, {"x": bt.B, "k": bt.U},
                            {"x": ir.Var("x"), "k": ir.Const(1)}, None, []))
    assert t is bt.U and dict(expr.kwargs).get("k", expr.args[-1]) == ir.Const(2)


def test_batch_types_join_and_widen():
    assert bt.join(bt.U, bt.B) is bt.B
    assert bt.join(bt.tup((bt.B, bt.U)), bt.tup((bt.U, bt.U))) == bt.tup((bt.B, bt.U))
    assert bt.join(bt.tup(()), bt.tup((bt.B,))) == bt.seq(bt.B)
    assert bt.join(bt.tape(bt.U), bt.tape(bt.B)) == bt.tape(bt.B)
    assert bt.join(bt.B, bt.tup((bt.B,))) == bt.TREE
    assert bt.batchify(bt.tup((bt.U, bt.seq(bt.U)))) == bt.tup((bt.B, bt.seq(bt.B)))
    assert not bt.is_batched(bt.dct(("a",), (bt.U,)))
    assert bt.item(bt.dct(("a", "b"), (bt.U, bt.B)), "b") is bt.B


def test_batch_types_print_as_the_vm_expressions_that_rebuild_them():
    types = [bt.tup((bt.U, bt.B)), bt.seq(bt.tup((bt.B,))), bt.tape(bt.U), bt.TREE,
             bt.dct(("s", "p"), (bt.U, bt.tup((bt.U, bt.B)))), bt.dct(("a",), (bt.B,))]
    for t in types:
        assert eval(repr(t), {"vm": vm}) == t
    assert repr(types[0]) == "vm.Tuple(vm.U, vm.B)"


def test_generated_vmap_source_passes_batch_types_readably():
    import redraft

    def pairs(x):
        acc = (0.0, 0.0)
        for i in range(3):
            a, b = acc
            acc = (a + x[i], b * x[i])
        return acc

    source = redraft.emit(pairs, "vmap")
    assert "vm.Tuple(vm.U, vm.U), vm.Tuple(vm.B, vm.B)" in source
    assert "('T'" not in source


def test_einsum_gains_a_batch_letter():
    assert batched_subscripts("ij,j->i", [False, True]) == "ij,zj->zi"
    assert batched_subscripts("i,i", [True, True]) == "zi,zi->z"
    assert batched_subscripts("zi,i->z", [True, False]) == "yzi,i->yz"


def test_library_functions_are_read_when_vmap_first_meets_them():
    """`import redraft` reads no library function's source to choose how vmap batches it
    (that took most of the import): the entry is decided on first lookup, through the
    source where Core can say the function, else by a loop; an alias of a function not yet
    decided gets the decision too."""
    import subprocess
    import sys
    probe = ("import redraft.numpy as jnp\n"
             "from redraft.compiler.transforms.batch.batching import BATCH_RULES, batch_entry\n"
             "print(BATCH_RULES[jnp.polyval].kind, batch_entry(jnp.polyval).kind,\n"
             "      BATCH_RULES[jnp.polyval].kind)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["lazy", "source", "source"]
    from redraft.compiler.primitives.registry import BatchEntry, batch_alias, defbatch_lazily

    def original(x):
        return x + 1

    def alias(x):
        return x + 1

    decided = []
    defbatch_lazily(original, lambda: decided.append(1) or BATCH_RULES.__setitem__(
        original, BatchEntry(original, "source")))
    batch_alias(alias, original)
    assert batch_entry(alias).kind == "source" and decided == [1]
    assert batch_entry(original).kind == "source" and decided == [1]
