"""Every primitive is differentiable and batchable through its public functions, or says why
not.

A primitive whose family declares its functions (registry.names_primitive, and
names_convenience for a lax convenience with parameters of its own such as lax.expand_dims:
every family but indexing) is checked from the registry alone: each of its functions needs a
jvp and a vjp rule for every operand (its parameters but those marked `defstatic`) or a
`defnondiff` mark, and a batching entry. For the rest, the table maps each primitive to the
functions user code calls to apply it (Python's `x[i]` and `x.at[i].op()` for the indexing
primitives, whose rules sit above their family file; `print` for debug_print) and names the
arguments derivatives flow through. The test fails, naming the offenders, for a primitive in
neither and for a function with neither a jvp and a vjp rule for each of those arguments nor
a `defnondiff` mark.
"""
import inspect
import operator
import typing

import redraft.compiler.ir.ssa  # declares the IR-level primitives too
import redraft.compiler.transforms.ad.rules  # noqa: F401  (registers every rule)
from redraft import lax
from redraft.compiler import primitives
from redraft.compiler.core import helpers
from redraft.compiler.primitives.registry import (BATCH_RULES, DIFFERENTIATED_BY_SOURCE,
                                                functions_of, rules_for)

NONE = ()  # expects a defnondiff mark

PRIMITIVE_TO_LAX_FUNCTION = {
    # indexing: Python's x[i] and x.at[i].set/add(v)
    "getitem": [(operator.getitem, ("a",)), (helpers.at_get, ("x",))],
    "index_update": [(helpers.at_set, ("x", "v")), (helpers.at_add, ("x", "v")),
                     (helpers.at_subtract, ("x", "v")), (helpers.at_multiply, ("x", "v")),
                     (helpers.at_divide, ("x", "v")), (helpers.at_min, ("x", "v")),
                     (helpers.at_max, ("x", "v")), (helpers.at_power, ("x", "v"))],
    # effects: staging turns Core's print(...) into debug_print
    "debug_print": [(print, NONE)],
}


def _control_flow_names() -> set[str]:
    """Control flow is left out: another issue turns lax.fori_loop, while_loop, scan, cond
    and switch (compiler/primitives/control.py) into Core loops and branches, which the
    transforms handle as control flow; the IR's cond/while/for primitives (family
    "control") only appear after staging, below the transforms."""
    try:
        from redraft.compiler.primitives import control
    except ImportError:
        return set()
    return {p.name for p in vars(control).values() if isinstance(p, primitives.Primitive)} | {
        p.name for p in primitives.ALL_PRIMITIVES.values() if p.family == "control"}


def _problem(fn, diff_args) -> str | None:
    """Why `fn` fails the contract, or None."""
    name = getattr(fn, "__name__", repr(fn))
    rules = rules_for(fn)
    if rules is None:
        return f"{name}: no rules and no defnondiff mark"
    if rules.nondiff_reason:
        return None if rules.nondiff_reason.strip() else f"{name}: defnondiff without a reason"
    if not diff_args:
        return f"{name}: expected a defnondiff mark"
    missing = [f"{mode} rule for `{arg}`" for arg in diff_args
               for mode, table in (("jvp", rules.jvp), ("vjp", rules.vjp)) if arg not in table]
    return f"{name}: no {', '.join(missing)}" if missing else None


def _declared_operands(fn) -> tuple[str, ...]:
    """The arguments derivatives flow through, as the family declares them: the function's
    positional parameters but those marked static (none where it is marked nondiff)."""
    rules = rules_for(fn)
    if rules is None or rules.nondiff_reason is not None:
        return NONE
    params = inspect.signature(fn).parameters.values()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                 and p.name not in rules.static)


def _functions(prim) -> list:
    """[(function, arguments derivatives flow through)] for `prim`: from its family's
    declaration, else from the table."""
    declared = functions_of(prim)
    if declared:
        return [(fn, _declared_operands(fn)) for fn in declared]
    return PRIMITIVE_TO_LAX_FUNCTION.get(prim.name, [])


def test_every_primitive_is_differentiable_or_marked():
    skipped = _control_flow_names()
    offenders = []
    for prim_name, prim in sorted(primitives.ALL_PRIMITIVES.items()):
        if prim_name in skipped:
            continue
        functions = _functions(prim)
        if not functions:
            offenders.append(f"{prim_name}: declares no function (registry.names_primitive) "
                             "and is not in PRIMITIVE_TO_LAX_FUNCTION")
            continue
        for fn, diff_args in functions:
            problem = _problem(fn, diff_args)
            if problem:
                offenders.append(f"{prim_name} ({problem})")
    assert not offenders, ("primitives whose public functions lack derivative rules or a "
                           "nondiff mark:\n  " + "\n  ".join(offenders))


def test_every_declared_function_has_a_batching_entry():
    """A family's functions are batched by the entry it declares beside their rules."""
    missing = [f"{prim.name}: {fn.__name__}" for prim in primitives.ALL_PRIMITIVES.values()
               for fn in functions_of(prim) if fn not in BATCH_RULES]
    assert not missing, f"declared functions with no batching entry: {missing}"


def test_a_declared_functions_rules_live_in_its_family_file():
    """One home per primitive: the jvp and vjp rules of a family's functions are written in
    the family file (compiler/primitives/<family>.py, or the file of the family that defines
    the primitive's lax function, as bits.py's elementwise primitives), never again under
    transforms/."""
    def homes(prim) -> set[str]:
        return {f"redraft.compiler.primitives.{prim.family}", functions_of(prim)[0].__module__}
    strays = [f"{prim.name}: {fn.__name__} {mode} rule for `{arg}` in {rule.__module__}"
              for prim in primitives.ALL_PRIMITIVES.values() for fn in functions_of(prim)
              if rules_for(fn) is not None
              for mode, table in (("jvp", rules_for(fn).jvp), ("vjp", rules_for(fn).vjp))
              for arg, rule in table.items()
              if rule.__module__ not in homes(prim)]
    assert not strays, "rules written outside their family file:\n  " + "\n  ".join(strays)


def test_declared_primitives_are_not_also_in_the_table():
    both = sorted(p.name for p in primitives.ALL_PRIMITIVES.values()
                  if functions_of(p) and p.name in PRIMITIVE_TO_LAX_FUNCTION)
    assert not both, f"declared by their family, so drop them from the table: {both}"


def test_table_names_only_primitives():
    unknown = sorted(set(PRIMITIVE_TO_LAX_FUNCTION) - set(primitives.ALL_PRIMITIVES))
    assert not unknown, f"PRIMITIVE_TO_LAX_FUNCTION names no primitive: {unknown}"


def test_every_public_lax_function_has_rules_or_a_mark():
    """Walking redraft.lax finds the conveniences too (lax.dot, lax.conv, ...)."""
    from redraft.compiler.primitives import control
    offenders = []
    for name in sorted(vars(lax)):
        value = getattr(lax, name)
        if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
            continue
        if typing.get_origin(value) is not None:
            continue  # a type alias for annotations (lax.DotDimensionNumbers), not a function
        if not callable(value) or getattr(value, "__module__", "") == control.__name__:
            continue  # control flow: see _control_flow_names
        if rules_for(value) is None and value not in DIFFERENTIATED_BY_SOURCE:
            offenders.append(name)
    assert not offenders, f"lax functions with no rules and no nondiff mark: {offenders}"
