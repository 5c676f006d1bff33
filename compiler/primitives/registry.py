"""The rules of every operation, keyed by the Python callable user code calls.

An operation family (compiler/primitives/elementwise.py, ...) declares here, beside its
primitive, impl and abstract eval, how each of its functions is differentiated and batched;
the transforms only read these tables. It sits below the transforms, so a family writes
its rules without importing them.

A derivative rule is a small Python function written in the user's own vocabulary (usually
a lambda), whose Core is inlined where the operation is used, so derivative source reads
like the math:

    defjvp(lax.sin, lambda x_dot, ans, x: x_dot * jnp.cos(x))
    defvjp(lax.sin, lambda g, ans, x: g * jnp.cos(x))

A jvp rule per differentiable argument gives that argument's linear contribution to the
output tangent (contributions are summed); a vjp rule per argument gives the argument's
cotangent contribution from the output cotangent `g`. Rule parameters after the first two
are matched by name to the operation's own parameters (static ones such as `axis` too).
`defnondiff` marks an operation whose output carries no derivative (comparisons, argmax),
with a reason, so the registry test can tell deliberate gaps from forgotten ones.

The names a rule reads (`jnp`, `lax`, `ad`, `lad`, `lah`) are the ones generated source imports.
A module below them imports their placeholders (`RuleName`) instead; the transforms bind
the real modules when they inline the rule (calls/inline.py), so the rule's source is the
same either way.

A batching entry says how vmap batches a call (batch/batching.py has the rule kinds):
`defbatch(op, rule)` with a rule function, or `ELEMENTWISE` / `elementwise_batching(...)`,
the one rule of an elementwise operation, declared here and built by the batch transform.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

from redraft.compiler.primitives.base import Primitive
from redraft.compiler.transforms.cache import IdentityTable


@dataclass
class OpRules:
    op: Callable
    signature: inspect.Signature | None
    jvp: dict[str, Callable] = field(default_factory=dict)
    vjp: dict[str, Callable] = field(default_factory=dict)
    nondiff_reason: str | None = None
    linear_in: tuple[str, ...] = ()
    joint_jvp: dict[tuple[str, ...], Callable] = field(default_factory=dict)
    static: set[str] = field(default_factory=set)
    zeros: dict[str, Callable] = field(default_factory=dict)  # see defzeros
    elementwise: bool = False  # see defelementwise
    rearranging: bool = False  # see defrearranging
    refusal: str | None = None  # see defrefuse


RULES: IdentityTable = IdentityTable()  # op -> OpRules
# A family keys its rules by the primitive: they are stored under the function that applies
# it (its lax function), which user code and generated source call.
FUNCTIONS: IdentityTable = IdentityTable()  # primitive -> [its lax function, its twins]


def names_primitive(fn: Callable, prim: Primitive) -> None:
    """`fn` is the function that applies `prim` (its lax function): rules declared for the
    primitive are the function's."""
    FUNCTIONS.setdefault(prim, []).insert(0, fn)


def names_convenience(fn: Callable, prim: Primitive) -> None:
    """`fn` is a convenience of the family applying `prim` with parameters of its own
    (lax.expand_dims on reshape_p): it keeps rules of its own, and the registry test checks
    them as it checks the primitive's function's."""
    FUNCTIONS.setdefault(prim, []).append(fn)


def functions_of(prim: Primitive) -> list[Callable]:
    """The functions that apply `prim`: its lax function first, then those declared the
    same operation (jnp.exp for lax.exp) or a convenience on it (lax.expand_dims)."""
    return list(FUNCTIONS.get(prim, ()))


def key(op) -> Callable:
    """The callable rules are stored under: a primitive's lax function, else `op`."""
    if isinstance(op, Primitive):
        if op not in FUNCTIONS:
            raise KeyError(f"primitive {op.name} has no function: call names_primitive first")
        return FUNCTIONS[op][0]
    return op


def _signature(op) -> inspect.Signature | None:
    try:
        return inspect.signature(op)
    except (TypeError, ValueError):
        return None


def _entry(op, signature=None) -> OpRules:
    op = key(op)
    if op not in RULES:
        RULES[op] = OpRules(op, signature or _signature(op))
    return RULES[op]


def _arg_names(op, rules: tuple, signature) -> list[str]:
    sig = signature or _signature(op)
    if sig is None:
        raise TypeError(f"{op!r} has no inspectable signature: pass signature=")
    names = [p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return names[:len(rules)]


def defjvp(op: Callable, *rules: Callable | None, argnames=None, signature=None) -> None:
    """Forward rules of `op`, one per leading argument (None: not differentiable in it)."""
    entry = _entry(op, signature)
    names = argnames or _arg_names(op, rules, entry.signature)
    for name, rule in zip(names, rules):
        if rule is not None:
            entry.jvp[name] = rule


def defvjp(op: Callable, *rules: Callable | None, argnames=None, signature=None) -> None:
    """Reverse rules of `op`, one per leading argument (None: not differentiable in it)."""
    entry = _entry(op, signature)
    names = argnames or _arg_names(op, rules, entry.signature)
    for name, rule in zip(names, rules):
        if rule is not None:
            entry.vjp[name] = rule


def defnondiff(op: Callable, reason: str) -> None:
    """`op`'s result has no derivative (it is integer- or bool-valued, or piecewise constant)."""
    _entry(op).nondiff_reason = reason


def deflinear(op: Callable, *argnames: str, signature=None) -> None:
    """`op` is linear in `argnames`: its tangent is `op` applied to the tangent."""
    _entry(op, signature).linear_in = argnames


def defzeros(op: Callable, *masks: Callable | None, argnames=None) -> None:
    """Where the cotangent to each leading argument is structurally zero: a rule (written
    like a vjp rule, `lambda g, ans, condition, x, y: ...`) giving a bool mask, True where
    the argument was not selected. Reverse mode keeps those zeros zero along the chain
    that made the argument, however infinite its partials there (ad.safe_mul)."""
    entry = _entry(op)
    names = argnames or _arg_names(op, masks, entry.signature)
    for name, mask in zip(names, masks):
        if mask is not None:
            entry.zeros[name] = mask


def defelementwise(*ops: Callable) -> None:
    """Each reverse rule of these ops is elementwise in `g` before its unbroadcast, so a
    structural zero of `g` is one of the argument's cotangent at the same position."""
    for op in ops:
        _entry(op).elementwise = True


def defrearranging(*ops: Callable) -> None:
    """Each reverse rule of these ops only moves, copies or sums entries of `g` (reshape,
    transpose, indexing, sum), so it moves g's structural zeros along with them."""
    for op in ops:
        _entry(op).rearranging = True


def rules_for(op) -> OpRules | None:
    if isinstance(op, Primitive):
        op = FUNCTIONS.get(op, [None])[0]
    return RULES.get(op)


def defrefuse(op: Callable, message: str) -> None:
    """`op` has no derivative the transforms may take, and differentiating it is an error
    (pure_callback: a zero derivative would be a silent wrong answer), said with `message`
    at the user's line."""
    _entry(op).refusal = message


def defjvp_joint(op: Callable, rule: Callable, argnames: tuple[str, ...]) -> None:
    """A jvp rule used when every argument in `argnames` is active (`a_dot + b_dot`)."""
    _entry(op).joint_jvp[tuple(argnames)] = rule


def alias(op: Callable, same_as: Callable) -> None:
    """`op` has exactly the rules (and parameter names) of `same_as` (operator.add = jnp.add)."""
    RULES[key(op)] = _entry(same_as)


DIFFERENTIATED_BY_SOURCE: IdentityTable = IdentityTable()  # op -> what it is written on


def defsource_derivative(op: Callable, written_on: str) -> None:
    """`op` has no derivative rules on purpose: forward and reverse mode read its source,
    plain redraft code over operations (and custom rules) that have theirs (`written_on`
    says which). The mark only records the choice; rules_for(op) stays None."""
    DIFFERENTIATED_BY_SOURCE[op] = written_on


def defstatic(op: Callable, *argnames: str) -> None:
    """`op` reads only the shape/structure of `argnames`, never their values' derivatives."""
    _entry(op).static |= set(argnames)


# ---- the names rules read ------------------------------------------------------------------

class RuleName:
    """A placeholder for a module rules read (`jnp`, `lax`, `ad`, `lad`) in a module that
    sits below it. Rules are never run as Python: the transforms inline their Core with the
    real module bound to this name (calls/inline.py `rule_globals`)."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr: str):
        raise RuntimeError(f"`{self.name}.{attr}` in a rule is read when a transform inlines "
                           "the rule, not when its module runs")

    def __repr__(self) -> str:
        return f"RuleName({self.name!r})"


jnp = RuleName("jnp")
lax = RuleName("lax")
ad = RuleName("ad")
lad = RuleName("lad")
lah = RuleName("lah")


# ---- batching --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ElementwiseBatching:
    """The rule of an elementwise operation: the same call, batched operands aligned so that
    broadcasting pairs per-example axes (batch/rules/common.py `elementwise`). `static`
    names parameters that must be constants; `kw_operands` operands passed by keyword."""
    static: tuple[str, ...] = ()
    kw_operands: tuple[str, ...] = ()


ELEMENTWISE = ElementwiseBatching()


@dataclass(frozen=True)
class LeadingAxesBatching:
    """The rule of an operation that maps over the leading axes of `operands` already (the
    fft over all but its trailing axes): the same call, the batch axis in front
    (batch/rules/linalg.py). `results`: how many arrays it returns (more than one: a tuple)."""
    operands: tuple[str, ...]
    results: int = 1


@dataclass(frozen=True)
class AxisBatching:
    """The rule of an operation on one operand along static axes: the operand (the
    parameter `operand`) batched at axis 0, the axis argument `param` (its default `default`
    when the call leaves it out) shifted past the batch axis (batch/rules/reductions.py
    `lax_axis`)."""
    param: str
    default: object = None
    operand: str = "operand"


def elementwise_batching(static: tuple[str, ...] = (),
                         kw_operands: tuple[str, ...] = ()) -> ElementwiseBatching:
    return ElementwiseBatching(tuple(static), tuple(kw_operands))


@dataclass
class BatchEntry:
    op: Callable
    kind: str  # "rule", "loop", "source", "unbatchable" or "lazy" (defbatch_lazily)
    rule: Callable | ElementwiseBatching | None = None
    reason: str | None = None
    returns: str = "array"  # for loops: "array" (jnp.stack) or "any" (vm.stack_examples)


BATCH_RULES: IdentityTable = IdentityTable()  # op -> BatchEntry


def defbatch(op: Callable, rule: Callable | ElementwiseBatching) -> None:
    """`rule(b: RuleCall) -> (expr, batch type)` batches calls of `op` (or a declared kind
    of rule, such as ELEMENTWISE)."""
    BATCH_RULES[key(op)] = BatchEntry(key(op), "rule", rule)


def defbatch_loop(op: Callable, reason: str, returns: str = "array") -> None:
    """`op` is batched by a loop over the examples; `reason` says why no vectorised rule."""
    BATCH_RULES[key(op)] = BatchEntry(key(op), "loop", reason=reason, returns=returns)


def defbatch_lazily(op: Callable, decide: Callable[[], None]) -> None:
    """`op`'s entry is made by `decide()` (which registers it) when first looked up:
    choosing between reading a library function's source and a loop over the examples
    costs a read of that source, and done at import for every library function it took
    most of `import redraft`."""
    BATCH_RULES[key(op)] = BatchEntry(key(op), "lazy", decide)


def defbatch_source(op: Callable) -> None:
    """`op` is plain Python over redraft.numpy: vmap transforms its source."""
    BATCH_RULES[key(op)] = BatchEntry(key(op), "source")


def defnotbatchable(op: Callable, reason: str) -> None:
    """`op` cannot be batched (its result's shape depends on per-example values)."""
    BATCH_RULES[key(op)] = BatchEntry(key(op), "unbatchable", reason=reason)


def batch_alias(op: Callable, same_as: Callable) -> None:
    """`op` batches exactly as `same_as` (operator.add and jnp.add)."""
    BATCH_RULES[key(op)] = BATCH_RULES[key(same_as)]


def same_operation(op: Callable, same_as: Callable | Primitive) -> None:
    """`op` is `same_as` under another name (jnp.exp is the primitive exp_p, as lax.exp):
    its derivative and batching rules are those of `same_as`."""
    alias(op, same_as)
    batch_alias(op, same_as)
    if isinstance(same_as, Primitive):
        FUNCTIONS[same_as].append(op)
