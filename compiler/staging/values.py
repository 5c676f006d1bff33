"""What staging needs to know about values: staged or not, joining the types two branches
or loop iterations give a name, and which called functions to interpret as Core."""
from __future__ import annotations

import re
import string
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from redraft.compiler.core.abstract import ShapedArray
from redraft.runtime import dtypes
from redraft.runtime.array import Array
from redraft.runtime.convert import as_array
from redraft.runtime.errors import RedraftError, TracerBoolConversionError
from redraft.runtime.pytree import tree_flatten, tree_unflatten
from redraft.runtime.staged import StagedBuf


class Unstageable(RedraftError):
    """A loop cannot become an IR loop (it carries Python objects, or needs run-time
    values as Python values); the interpreter then runs it now, unrolled."""


def is_staged(v) -> bool:
    return isinstance(v, Array) and type(v._buf) is StagedBuf


def truth(v) -> bool:
    return bool(v)


def predicate(cond) -> Array:
    """A staged condition as a bool scalar (nonzero numbers are true, as in Python)."""
    if cond.shape != ():
        raise TracerBoolConversionError(
            f"the truth value of an array of shape {cond.shape} is ambiguous in an `if` or "
            "`while`: reduce it with .any() or .all()")
    if cond.dtype != np.bool_:
        import redraft.numpy as jnp
        return jnp.not_equal(cond, 0)
    return cond


def _type(v) -> ShapedArray:
    if isinstance(v, ShapedArray):
        return v
    if isinstance(v, Array):
        return ShapedArray(v.shape, v.dtype, v._weak)
    a = as_array(v)
    return ShapedArray(a.shape, a.dtype, a._weak)


def user_name(name: str) -> str:
    """The user's name behind an SSA version (`y_2` was the user's `y`)."""
    return re.sub(r"(_\d+)+$", "", name) or name


def join_avals(name: str, a, b) -> ShapedArray:
    """The type a name must have to hold `a` on one path and `b` on the other."""
    if a is None or b is None:  # a placeholder on one path: the other path decides
        if a is None and b is None:
            raise Unstageable(f"`{user_name(name)}` is None on both paths")
        return _type(b if a is None else a)
    ta, tb = _type(a), _type(b)
    if ta.shape != tb.shape:
        name = user_name(name)
        raise Unstageable(f"`{name}` has shape {ta.shape} on one path and {tb.shape} on the "
                          "other; values chosen at run time need one shape")
    dtype, weak = dtypes.promote_pair(ta.dtype, ta.weak_type, tb.dtype, tb.weak_type)
    return ShapedArray(ta.shape, dtype, weak)


@dataclass
class BranchMerge:
    """How one name's values on the two paths of an `if` on a run-time value become one value
    after it. The values are flattened to pytree leaves; each leaf is either known at staging
    time (the same Python value on both paths, or a Python value set on the only path that can
    read it) or chosen at run time (an array or number: a result of the staged branch)."""
    name: str
    treedef: Any
    known: list  # per leaf: its value, or CHOSEN
    then_leaves: list
    else_leaves: list

    def chosen(self) -> list[int]:
        return [i for i, k in enumerate(self.known) if k is CHOSEN]

    def rebuild(self, results: Iterator) -> Any:
        """The name's value after the branch, taking chosen leaves from `results` in order."""
        leaves = [next(results) if k is CHOSEN else k for k in self.known]
        return tree_unflatten(self.treedef, leaves)


CHOSEN = object()  # a leaf whose value the staged branch chooses at run time


def merge_outputs(names: list[str], then_env: dict, else_env: dict) -> list[BranchMerge]:
    """A BranchMerge for each name an `if` on a run-time value writes. A name set on one path
    only holds None on the other, a placeholder: generated code reads such a name only under
    the same condition (a tape, a branch's temporary), so its Python leaves are known from the
    path that sets it and its array leaves are zeros on the path that does not."""
    return [_merge(n, then_env[n], else_env[n]) for n in names]


def _merge(name: str, a, b) -> BranchMerge:
    if a is b:
        leaves, treedef = tree_flatten(a)
        return BranchMerge(name, treedef, list(leaves), leaves, leaves)
    if a is None or b is None:
        defined = b if a is None else a
        leaves, treedef = tree_flatten(defined)
        holes = [None] * len(leaves)
        known = [CHOSEN if isinstance(v, Array) else v for v in leaves]
        then_leaves, else_leaves = (holes, leaves) if a is None else (leaves, holes)
        return BranchMerge(name, treedef, known, then_leaves, else_leaves)
    a_leaves, a_def = tree_flatten(a)
    b_leaves, b_def = tree_flatten(b)
    if a_def != b_def:
        e = Unstageable(f"`{user_name(name)}` is given values of different structure "
                        f"({a!r:.40} and {b!r:.40}) by the two branches of an `if` on a "
                        "run-time value")
        e.structural = True  # a staged loop around the `if` runs unrolled instead
        raise e
    return BranchMerge(name, a_def, [_merge_leaf(name, x, y) for x, y in zip(a_leaves, b_leaves)],
                       a_leaves, b_leaves)


def _merge_leaf(name: str, a, b):
    if a is b or (_simple(a) and _simple(b) and type(a) is type(b) and a == b):
        return a  # Python leaves (never arrays: comparing those would stage an `eq`)
    if _number(a) and _number(b):
        return CHOSEN
    raise Unstageable(f"`{user_name(name)}` is given different Python values ({a!r:.40} and "
                      f"{b!r:.40}) by the two branches of an `if` on a run-time value")


def _simple(v) -> bool:
    return isinstance(v, (int, float, bool, complex, str, type(None), tuple, range, slice))


def _number(v) -> bool:
    return isinstance(v, (int, float, bool, complex, np.number, Array))


def to_array(v, name: str) -> Array:
    if isinstance(v, Array):
        return v
    if _number(v):
        return as_array(v)
    raise Unstageable(f"`{name}` holds a {type(v).__name__}, not an array")


def coerce(v, aval: ShapedArray) -> Array:
    """`v` as an Array of `aval`'s dtype (None, a placeholder no path reads, as zeros)."""
    if v is None:
        import redraft.numpy as jnp
        return jnp.zeros(aval.shape, aval.dtype)
    x = to_array(v, "value")
    if x.dtype != aval.dtype:
        from redraft.numpy.promotion import convert
        x = convert(x, aval.dtype, aval.weak_type)
    return x


class RowsOf:
    """`for row in x` over an array: a loop over its first axis."""

    def __init__(self, array: Array):
        self.array = array

    def __len__(self) -> int:
        return self.array.shape[0]

    def rows(self):
        return (self.array[i] for i in range(len(self)))


class StagedRange:
    """`range(start, stop, step)` with a bound only known at run time (lax.fori_loop with a
    traced trip count): a for loop over it stages as a while loop on its counter."""

    def __init__(self, start, stop=None, step=1):
        if stop is None:
            start, stop = 0, start
        if is_staged(step):
            raise Unstageable("a range's step must be known when compiling")
        if step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step


class StagedString:
    """`"x = {:.2f}".format(x)` with staged operands: formatted when the code runs."""

    def __init__(self, template: str, args: list, kwargs: dict):
        self.template = template
        self.args = args
        self.kwargs = kwargs

    def template_and_operands(self) -> tuple[str, list]:
        """A template whose only fields are positional `{}`s for array operands; every
        other field is formatted now."""
        out, operands, auto = [], [], 0
        for text, field, spec, conversion in string.Formatter().parse(self.template):
            out.append(text.replace("{", "{{").replace("}", "}}"))
            if field is None:
                continue
            if field == "":
                value, auto = self.args[auto], auto + 1
            elif field.isdigit():
                value = self.args[int(field)]
            else:
                value = self.kwargs[field]
            tail = (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            if isinstance(value, Array):
                out.append("{" + tail + "}")
                operands.append(value)
            else:
                text_now = ("{" + tail + "}").format(value)
                out.append(text_now.replace("{", "{{").replace("}", "}}"))
        return "".join(out), operands


def core_to_interpret(fn):
    """The Core of `fn` if staging should interpret it (the user's functions, generated
    ones, jitted ones), else None (library functions run as they are)."""
    from redraft.compiler.transforms.cache import TRANSFORM_CACHE
    return TRANSFORM_CACHE.get(fn, "staging", lambda: _find_core(fn))


# Wrapper types whose call staging reads as a call of the function inside (jit's Jitted):
# the public API that defines them registers them here at import (register_transparent).
_TRANSPARENT: dict[type, Callable] = {}


def register_transparent(cls: type, inner: Callable) -> None:
    """Staging interprets a call of a `cls` object as a call of `inner(obj)`."""
    _TRANSPARENT[cls] = inner


def _find_core(fn):
    from redraft.compiler.frontend.source import OPAQUE_LIBRARIES
    from redraft.compiler.transforms.calls.callable_core import core_of
    for cls in type(fn).__mro__:
        if cls in _TRANSPARENT:
            fn = _TRANSPARENT[cls](fn)
            break
    if hasattr(fn, "__redraft_transformable__"):
        return core_of(fn)
    if hasattr(getattr(fn, "fun", None), "__redraft_transformable__"):
        # a custom_jvp/vjp specialised on its function arguments (lax.custom_root's rule):
        # its function's Core, so that calls of those functions are staged as the user's are
        return core_of(fn.fun)
    if isinstance(fn, types.MethodType) and _find_core(fn.__func__) is not None:
        return core_of(fn)  # `self.helper(...)` of a user's object: read for its self
    if not isinstance(fn, types.FunctionType):
        return None
    module = getattr(fn, "__module__", "") or ""
    package = module.split(".")[0]
    if package in ("redraft", "redraft_generated") or package in OPAQUE_LIBRARIES:
        return None
    try:
        return core_of(fn)
    except (SyntaxError, OSError, TypeError):
        return None  # unreadable or unsupported source: run it as Python instead
