"""Derivative rules of operations, keyed by the Python callable user code calls.

A rule is a small Python function written with redraft.numpy (usually a lambda), whose
Core is inlined where the operation is used, so derivative source reads like the math:

    defjvp(jnp.sin, lambda x_dot, ans, x: x_dot * jnp.cos(x))
    defvjp(jnp.sin, lambda g, ans, x: g * jnp.cos(x))

A jvp rule per differentiable argument gives that argument's linear contribution to the
output tangent (contributions are summed); a vjp rule per argument gives the argument's
cotangent contribution from the output cotangent `g`. Rule parameters after the first two
are matched by name to the operation's own parameters (static ones such as `axis` too).
`defnondiff` marks an operation whose output carries no derivative (comparisons, argmax),
with a reason, so the registry test can tell deliberate gaps from forgotten ones.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

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


RULES: IdentityTable = IdentityTable()  # op -> OpRules


def _signature(op) -> inspect.Signature | None:
    try:
        return inspect.signature(op)
    except (TypeError, ValueError):
        return None


def _entry(op, signature=None) -> OpRules:
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
    return RULES.get(op)


def defjvp_joint(op: Callable, rule: Callable, argnames: tuple[str, ...]) -> None:
    """A jvp rule used when every argument in `argnames` is active (`a_dot + b_dot`)."""
    _entry(op).joint_jvp[tuple(argnames)] = rule


def alias(op: Callable, same_as: Callable) -> None:
    """`op` has exactly the rules (and parameter names) of `same_as` (operator.add = jnp.add)."""
    RULES[op] = _entry(same_as)


def defstatic(op: Callable, *argnames: str) -> None:
    """`op` reads only the shape/structure of `argnames`, never their values' derivatives."""
    _entry(op).static |= set(argnames)
