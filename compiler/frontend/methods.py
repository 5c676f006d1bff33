"""Array methods and attributes in user code, resolved to the redraft.numpy functions behind
them, so that the transforms see `jnp.sum(x, 0)` where the user wrote `x.sum(0)`."""
from __future__ import annotations

import gast

from redraft.compiler.core import ir

ARRAY_METHODS = ("sum", "mean", "std", "var", "max", "min", "prod", "any", "all", "argmax",
                 "argmin", "cumsum", "cumprod", "reshape", "transpose", "astype", "dot",
                 "clip", "ravel", "flatten", "squeeze", "round", "conj", "conjugate",
                 "swapaxes", "take", "trace", "diagonal", "repeat", "sort", "argsort")
VARARG_SHAPE_METHODS = ("reshape", "transpose")
DICT_VIEWS = {"values": "values_of", "items": "items_of", "keys": "keys_of"}
STATIC_ATTRIBUTES = ("shape", "ndim", "dtype", "size", "weak_type", "itemsize")
AT_MODES = {"set": "set", "add": "add", "multiply": "multiply", "mul": "multiply",
            "divide": "divide", "min": "min", "max": "max", "power": "power", "get": "get",
            "subtract": "subtract"}


def _jnp():
    import redraft.numpy as jnp
    return jnp


def method_ref(name: str) -> ir.Ref:
    """The Ref of the jnp function behind method `name` (`x.T` is jnp.transpose)."""
    from redraft.compiler.core import helpers
    if name == "astype":
        return ir.Ref(helpers.astype, "astype")
    if name == "flatten":
        name = "ravel"
    if name == "conjugate":
        name = "conj"
    return jnp_ref(name)


def jnp_ref(name: str) -> ir.Ref:
    """Ref to redraft.numpy's `name`, printed `jnp.name`."""
    return ir.Ref(getattr(_jnp(), name), f"jnp.{name}", _jnp())


def lower_attribute(base: ir.Atom, attr: str) -> ir.Expr:
    """`x.attr` on a local value: `.T`/`.real`/`.imag` are array functions, the rest Attr."""
    if attr == "T":
        return ir.Call(method_ref("transpose"), (base,))
    if attr in ("real", "imag", "mT"):
        if attr == "mT":
            return ir.Call(method_ref("swapaxes"), (base, ir.Const(-1), ir.Const(-2)))
        return ir.Call(jnp_ref(attr), (base,))
    return ir.Attr(base, attr)


def lower_method_call(receiver: ir.Atom, name: str, args: tuple, kwargs: tuple,
                      star) -> ir.Expr:
    """`x.name(args)`: an array method becomes a jnp call, a dict view its helper, anything
    else stays a method."""
    if name in DICT_VIEWS and not args and not kwargs and star is None:
        from redraft.compiler.core import helpers
        view = DICT_VIEWS[name]
        return ir.Call(ir.Ref(getattr(helpers, view), view), (receiver,))
    if name in ARRAY_METHODS and star is None:
        if name in VARARG_SHAPE_METHODS and len(args) > 1:
            return ir.Call(method_ref(name), (receiver,) + _packed_tuple(args), kwargs)
        return ir.Call(method_ref(name), (receiver,) + args, kwargs)
    return ir.Call(ir.Attr(receiver, name), args, kwargs, star)


def _packed_tuple(args: tuple) -> tuple:
    """reshape(2, 3) -> reshape((2, 3)) when every size is a constant; else keep them."""
    if all(isinstance(a, ir.Const) for a in args):
        return (ir.Const(tuple(a.value for a in args)),)
    return args


def match_at_update(node):
    """(array, index, mode, value) for `x.at[idx].mode(value)`, else None."""
    func = node.func
    if not (isinstance(func, gast.Attribute) and func.attr in AT_MODES):
        return None
    sub = func.value
    if not (isinstance(sub, gast.Subscript) and isinstance(sub.value, gast.Attribute)
            and sub.value.attr == "at"):
        return None
    mode = AT_MODES[func.attr]
    if mode == "get":
        return sub.value.value, sub.slice, mode, None
    if len(node.args) != 1:
        return None
    return sub.value.value, sub.slice, mode, node.args[0]


def at_update_call(base: ir.Atom, idx: ir.Atom, mode: str, value=None, kwargs=()) -> ir.Call:
    """`x.at[idx].mode(value)`; with keywords (mode='clip', fill_value=...) a call of the
    out-of-bounds-aware form in redraft/numpy/indexing.py."""
    from redraft.compiler.core import helpers
    if kwargs:
        return _at_call_with_options(base, idx, mode, value, tuple(kwargs))
    fn = helpers.AT_UPDATES[mode]
    if mode == "get":
        return ir.Call(ir.Ref(fn, ".at.get"), (base, idx))
    return ir.Call(ir.Ref(fn, f".at.{mode}"), (base, idx, value))


def _at_call_with_options(base, idx, mode: str, value, kwargs: tuple) -> ir.Call:
    from redraft.numpy import indexing

    def ref(name: str) -> ir.Ref:
        return ir.Ref(getattr(indexing, name), f"jnp_indexing.{name}", indexing)

    if mode == "get":
        return ir.Call(ref("at_get_mode"), (base, idx), kwargs)
    if mode in ("set", "add"):
        return ir.Call(ref(f"at_{mode}_mode"), (base, idx, value), kwargs)
    return ir.Call(ref("at_update_mode"), (base, idx, value, ir.Const(mode)), kwargs)


def contains(a, b) -> bool:
    """`a in b`."""
    return a in b


def not_contains(a, b) -> bool:
    """`a not in b`."""
    return a not in b
