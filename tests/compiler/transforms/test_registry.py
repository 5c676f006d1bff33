"""Every primitive is differentiable through its public function, or says why not.

The table maps each primitive to the functions user code calls to apply it (the lax
function; Python's `x[i]` and `x.at[i].op()` for the indexing primitives) and names the
arguments derivatives flow through. The test fails, naming the offenders, for a primitive
missing from the table and for a function with neither a jvp and a vjp rule for each of
those arguments nor a `defnondiff` mark.
"""
import inspect
import operator
import typing

import redraft.compiler.ir.ssa  # declares the IR-level primitives too
import redraft.compiler.transforms.ad.rules  # noqa: F401  (registers every rule)
from redraft import lax
from redraft.compiler import primitives
from redraft.compiler.core import helpers
from redraft.compiler.primitives.random import random_sample
from redraft.compiler.transforms.ad.registry import rules_for

X = ("x",)
XY = ("x", "y")
NONE = ()  # expects a defnondiff mark

PRIMITIVE_TO_LAX_FUNCTION = {
    # elementwise, unary
    "neg": [(lax.neg, X)], "abs": [(lax.abs, X)], "exp": [(lax.exp, X)],
    "exp2": [(lax.exp2, X)], "log": [(lax.log, X)], "log1p": [(lax.log1p, X)],
    "expm1": [(lax.expm1, X)], "tanh": [(lax.tanh, X)], "logistic": [(lax.logistic, X)],
    "sin": [(lax.sin, X)], "cos": [(lax.cos, X)], "tan": [(lax.tan, X)],
    "asin": [(lax.asin, X)], "acos": [(lax.acos, X)], "atan": [(lax.atan, X)],
    "sinh": [(lax.sinh, X)], "cosh": [(lax.cosh, X)], "asinh": [(lax.asinh, X)],
    "acosh": [(lax.acosh, X)], "atanh": [(lax.atanh, X)], "sqrt": [(lax.sqrt, X)],
    "rsqrt": [(lax.rsqrt, X)], "cbrt": [(lax.cbrt, X)], "erf": [(lax.erf, X)],
    "erfc": [(lax.erfc, X)], "erf_inv": [(lax.erf_inv, X)], "lgamma": [(lax.lgamma, X)],
    "digamma": [(lax.digamma, X)], "real": [(lax.real, X)], "imag": [(lax.imag, X)],
    "conj": [(lax.conj, X)],
    "sign": [(lax.sign, NONE)], "floor": [(lax.floor, NONE)], "ceil": [(lax.ceil, NONE)],
    "round": [(lax.round, NONE)], "is_finite": [(lax.is_finite, NONE)],
    "not": [(lax.bitwise_not, NONE)], "population_count": [(lax.population_count, NONE)],
    "clz": [(lax.clz, NONE)],
    # elementwise, binary
    "add": [(lax.add, XY)], "sub": [(lax.sub, XY)], "mul": [(lax.mul, XY)],
    "div": [(lax.div, XY)], "rem": [(lax.rem, XY)], "pow": [(lax.pow, XY)],
    "max": [(lax.max, XY)], "min": [(lax.min, XY)], "atan2": [(lax.atan2, XY)],
    "nextafter": [(lax.nextafter, NONE)], "and": [(lax.bitwise_and, NONE)],
    "or": [(lax.bitwise_or, NONE)], "xor": [(lax.bitwise_xor, NONE)],
    "shift_left": [(lax.shift_left, NONE)],
    "shift_right_logical": [(lax.shift_right_logical, NONE)],
    "shift_right_arithmetic": [(lax.shift_right_arithmetic, NONE)],
    "eq": [(lax.eq, NONE)], "ne": [(lax.ne, NONE)], "lt": [(lax.lt, NONE)],
    "le": [(lax.le, NONE)], "gt": [(lax.gt, NONE)], "ge": [(lax.ge, NONE)],
    # elementwise, the rest
    "select": [(lax.select, ("on_true", "on_false"))],
    "clamp": [(lax.clamp, ("min", "x", "max"))],
    "integer_pow": [(lax.integer_pow, X)],
    "convert_element_type": [(lax.convert_element_type, ("x",))],
    # indexing: Python's x[i] and x.at[i].set/add(v)
    "getitem": [(operator.getitem, ("a",)), (helpers.at_get, ("x",))],
    "index_update": [(helpers.at_set, ("x", "v")), (helpers.at_add, ("x", "v")),
                     (helpers.at_subtract, ("x", "v")), (helpers.at_multiply, ("x", "v")),
                     (helpers.at_divide, ("x", "v")), (helpers.at_min, ("x", "v")),
                     (helpers.at_max, ("x", "v")), (helpers.at_power, ("x", "v"))],
    # contractions and convolutions
    "dot_general": [(lax.dot_general, ("lhs", "rhs")), (lax.dot, ("lhs", "rhs"))],
    "conv_general_dilated": [(lax.conv_general_dilated, ("lhs", "rhs")),
                             (lax.conv, ("lhs", "rhs")),
                             (lax.conv_with_general_padding, ("lhs", "rhs")),
                             (lax.conv_transpose, ("lhs", "rhs"))],
    # reductions, scans, sorting
    "reduce_sum": [(lax.reduce_sum, ("operand",))],
    "reduce_prod": [(lax.reduce_prod, ("operand",))],
    "reduce_max": [(lax.reduce_max, ("operand",))],
    "reduce_min": [(lax.reduce_min, ("operand",))],
    "reduce_and": [(lax.reduce_and, NONE)], "reduce_or": [(lax.reduce_or, NONE)],
    "argmax": [(lax.argmax, NONE)], "argmin": [(lax.argmin, NONE)],
    "cumsum": [(lax.cumsum, ("operand",))], "cumprod": [(lax.cumprod, ("operand",))],
    "cummax": [(lax.cummax, ("operand",))], "cummin": [(lax.cummin, ("operand",))],
    "sort": [(lax.sort, ("operand",))], "argsort": [(lax.argsort, NONE)],
    # shapes
    "reshape": [(lax.reshape, ("operand",)), (lax.expand_dims, ("array",))],
    "broadcast_in_dim": [(lax.broadcast_in_dim, ("operand",)), (lax.broadcast, ("operand",))],
    "transpose": [(lax.transpose, ("operand",))],
    "squeeze": [(lax.squeeze, ("array",))],
    "rev": [(lax.rev, ("operand",))],
    "concatenate": [(lax.concatenate, ("operands",))],
    "pad": [(lax.pad, ("operand", "padding_value"))],
    "slice": [(lax.slice, ("operand",))],
    "dynamic_slice": [(lax.dynamic_slice, ("operand",)),
                      (lax.dynamic_index_in_dim, ("operand",))],
    "dynamic_update_slice": [(lax.dynamic_update_slice, ("operand", "update"))],
    "iota": [(lax.iota, NONE), (lax.broadcasted_iota, NONE)],
    # gather and scatter
    "gather": [(lax.gather, ("operand",))],
    "scatter": [(lax.scatter, ("operand", "updates"))],
    "scatter_add": [(lax.scatter_add, ("operand", "updates"))],
    "scatter_mul": [(lax.scatter_mul, ("operand", "updates"))],
    "scatter_min": [(lax.scatter_min, ("operand", "updates"))],
    "scatter_max": [(lax.scatter_max, ("operand", "updates"))],
    # factorisations and the fft
    "cholesky": [(lax.linalg.cholesky, X)], "eigh": [(lax.linalg.eigh, X)],
    "lu": [(lax.linalg.lu, X)], "qr": [(lax.linalg.qr, X)], "svd": [(lax.linalg.svd, X)],
    "triangular_solve": [(lax.linalg.triangular_solve, ("a", "b"))],
    "eig": [(lax.linalg.eig, NONE)], "fft": [(lax.fft, X)],
    # effects: staging turns Core's print(...) into debug_print
    "debug_print": [(print, NONE)],
    # collectives over a pmap axis (compiler/primitives/collectives.py)
    "psum": [(lax.psum, X), (lax.pmean, X)], "pmax": [(lax.pmax, X)], "pmin": [(lax.pmin, X)],
    "all_gather": [(lax.all_gather, X)], "psum_scatter": [(lax.psum_scatter, X)],
    "all_to_all": [(lax.all_to_all, X)],
    "ppermute": [(lax.ppermute, X), (lax.pshuffle, X)], "axis_index": [(lax.axis_index, NONE)],
    # redraft.random's samplers inside compiled code
    "random_sample": [(random_sample, NONE)],
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


def test_every_primitive_is_differentiable_or_marked():
    skipped = _control_flow_names()
    offenders = []
    for prim_name in sorted(primitives.ALL_PRIMITIVES):
        if prim_name in skipped:
            continue
        if prim_name not in PRIMITIVE_TO_LAX_FUNCTION:
            offenders.append(f"{prim_name}: not in PRIMITIVE_TO_LAX_FUNCTION")
            continue
        for fn, diff_args in PRIMITIVE_TO_LAX_FUNCTION[prim_name]:
            problem = _problem(fn, diff_args)
            if problem:
                offenders.append(f"{prim_name} ({problem})")
    assert not offenders, ("primitives whose public functions lack derivative rules or a "
                           "nondiff mark:\n  " + "\n  ".join(offenders))


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
        if rules_for(value) is None:
            offenders.append(name)
    assert not offenders, f"lax functions with no rules and no nondiff mark: {offenders}"
