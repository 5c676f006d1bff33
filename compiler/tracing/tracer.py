"""Stand-in values that record what a function does with them as Core statements.

A Tracer stands for one Core variable. Operators and array methods on it, and calls of
library functions with it among their arguments (environment.py routes those here), append
`name = op(atoms)` to the Recording and return a new Tracer for `name`. A tracer has no
shape and no numbers: Python that needs them (`if x > 0`, `int(x)`, `len(x)`, unpacking)
raises JAX's error classes, saying that redraft traced the function and why.
"""
from __future__ import annotations

import dis
import operator
import sys
from typing import Any

from redraft.compiler.core import ir
from redraft.compiler.frontend import methods
from redraft.runtime.errors import ConcretizationTypeError, TracerBoolConversionError
from redraft.runtime.pytree import _REGISTRY, tree_flatten, tree_leaves, tree_unflatten

GETITEM = ir.Ref(operator.getitem, "[]")
_LITERALS = (int, float, bool, complex, str, type(None))


class StructureUnknownError(ConcretizationTypeError):
    """A traced function read without its arguments (so each parameter is one tracer)
    needed the length or items of one: a caller that can run it per call instead (vmap's
    loop over the examples) catches this."""


class Recording:
    """The Core statements one trace has recorded so far, and the code objects it runs."""

    def __init__(self, name: str, reason: str, filename: str, firstline: int):
        self.name = name
        self.reason = reason
        self.filename = filename
        self.firstline = firstline
        self.body: list[ir.Stmt] = []
        self.codes: set = set()  # code objects of the traced functions (for user lines)
        self.counter = 0
        self.constants = 0
        self.reserved: set[str] = set()  # the parameters' names

    # ---- statements ------------------------------------------------------------------------
    def emit(self, expr: ir.Expr) -> "Tracer":
        """Append `t<k> = expr` and return the tracer of t<k>."""
        return self.emit_unpacked(expr, 1)[0]

    def emit_unpacked(self, expr: ir.Expr, n: int) -> list["Tracer"]:
        """Append `t<k>, ..., t<k+n-1> = expr` and return their tracers (n = 1: `t<k> =
        expr`, the whole value)."""
        names = []
        for _ in range(n):
            self.counter += 1
            while f"t{self.counter}" in self.reserved:
                self.counter += 1
            names.append(f"t{self.counter}")
        self.body.append(ir.Assign(tuple(names), expr, self.origin()))
        return [Tracer(self, ir.Var(name)) for name in names]

    def call(self, ref: ir.Ref, args: tuple, kwargs: dict) -> "Tracer":
        atoms = tuple(self.atom(a) for a in args)
        kws = tuple((k, self.atom(v)) for k, v in kwargs.items())
        return self.emit(ir.Call(ref, atoms, kws))

    def origin(self) -> ir.Origin:
        """The user's (file, line) that is running now: the innermost traced frame."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code in self.codes:
                return frame.f_code.co_filename, frame.f_lineno
            frame = frame.f_back
        return self.filename, self.firstline

    def fresh_alias(self, value) -> str:
        """A name for a constant the trace refers to (`const_3`, `grad_fn_4`)."""
        self.constants += 1
        return f"{_constant_name(value)}_{self.constants}"

    # ---- values as atoms -------------------------------------------------------------------
    def atom(self, value: Any) -> ir.Atom:
        """The Core atom for `value`: its variable, a literal, or a recorded container."""
        if isinstance(value, Tracer):
            if value._rec is not self:
                raise self.error(ConcretizationTypeError, "a value traced for another "
                                 "function was used here (a traced value escaped its trace)")
            return value._var
        if isinstance(value, _LITERALS) or value is Ellipsis:
            return ir.Const(value)
        if isinstance(value, slice):
            if all(isinstance(p, _LITERALS) for p in (value.start, value.stop, value.step)):
                return ir.Const(value)
            parts = tuple(self.atom(p) for p in (value.start, value.stop, value.step))
            return self.emit(ir.Call(ir.Ref(slice, "slice"), parts))._var
        if type(value) is tuple:
            if all(_is_literal_tree(v) for v in value):
                return ir.Const(value)
            return self.emit(ir.Tuple(tuple(self.atom(v) for v in value)))._var
        if type(value) is list:
            return self.emit(ir.List(tuple(self.atom(v) for v in value)))._var
        if type(value) is dict and _holds_tracer(value):
            from redraft.compiler.core import helpers
            keys = self.atom(tuple(value))
            items = self.atom(tuple(value.values()))
            return self.emit(ir.Call(ir.Ref(helpers.make_dict, "dict_of"), (keys, items)))._var
        if _holds_tracer(value):  # a namedtuple or registered pytree node of tracers
            return self._tree_atom(value)
        value = unwrap(value)
        return ir.Ref(value, self.fresh_alias(value))

    def _tree_atom(self, value) -> ir.Atom:
        """`unflatten_like([leaf, ...], like)`: the pytree `value` rebuilt from its leaves,
        `like` a tree of its structure (a rule every transform knows)."""
        from redraft.compiler.transforms.runtime.ad import unflatten_like
        leaves, treedef = tree_flatten(value)
        like = tree_unflatten(treedef, [0] * len(leaves))
        items = self.atom(list(leaves))
        ref = ir.Ref(unflatten_like, "unflatten_like")
        return self.emit(ir.Call(ref, (items, ir.Ref(like, self.fresh_alias(like)))))._var

    # ---- errors ----------------------------------------------------------------------------
    def error(self, kind: type, what: str) -> Exception:
        file, line = self.origin()
        return kind(
            f"{file}:{line}: {what}. redraft traced `{self.name}` instead of reading its "
            f"source, because {self.reason}; a traced function is recorded as straight-line "
            "code on values with no shape or numbers, so Python control flow and conversions "
            "on them are not possible. Use jnp.where / lax.cond / lax.fori_loop, or define "
            "the function in a file so that redraft can read its source")


# The proxies of environment.py, each with the object it stands for (registered there).
VIEWS: dict[type, Any] = {}


def unwrap(value):
    """The object behind a proxy (a constant the trace refers to)."""
    view = VIEWS.get(type(value))
    return value if view is None else view(value)


def _holds_tracer(tree) -> bool:
    if isinstance(tree, Tracer):
        return True
    if isinstance(tree, (tuple, list)):
        return any(_holds_tracer(v) for v in tree)
    if isinstance(tree, dict):
        return any(_holds_tracer(v) for v in tree.values())
    if type(tree) in _REGISTRY:  # a registered pytree node (a model's parameters)
        return any(isinstance(v, Tracer) for v in tree_leaves(tree))
    return False


def holds_tracer(args: tuple, kwargs: dict) -> bool:
    """Whether any argument (in nested tuples, lists and dicts) is a tracer."""
    return _holds_tracer(args) or _holds_tracer(kwargs)


def _is_literal_tree(v) -> bool:
    if isinstance(v, _LITERALS) or v is Ellipsis:
        return True
    if isinstance(v, slice):
        return all(isinstance(p, _LITERALS) for p in (v.start, v.stop, v.step))
    return type(v) is tuple and all(_is_literal_tree(x) for x in v)


def _constant_name(value) -> str:
    name = getattr(value, "__name__", None)
    if isinstance(name, str) and name.isidentifier() and not name.startswith("_"):
        return name
    return "const"


# ---- the stand-in value ----------------------------------------------------------------------

class Tracer:
    """One recorded value: the Core variable `_var` of the Recording `_rec`."""

    __slots__ = ("_rec", "_var")
    __array_ufunc__ = None  # NumPy scalars and arrays defer to our reflected operators
    __array_priority__ = 1000

    def __init__(self, rec: Recording, var: ir.Var):
        self._rec = rec
        self._var = var

    def __repr__(self) -> str:
        return f"Traced<{self._var.name}>"

    __hash__ = object.__hash__

    # ---- attributes and methods ------------------------------------------------------------
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name == "at":
            return _At(self)
        if name in methods.ARRAY_METHODS:
            return _Method(self, name)
        if name in ("T", "real", "imag", "mT"):
            return self._rec.emit(methods.lower_attribute(self._var, name))
        return self._rec.emit(ir.Attr(self._var, name))

    def __getitem__(self, index):
        return self._rec.emit(ir.Call(GETITEM, (self._var, self._rec.atom(index))))

    # ---- a concrete array indexed by or updated with a tracer (runtime/array.py asks) ----
    def __redraft_index__(self, array, index):
        """array[index], recorded: `index` holds this tracer, `array` is concrete."""
        return self._rec.emit(ir.Call(GETITEM, (self._rec.atom(array),
                                                self._rec.atom(index))))

    def __redraft_update__(self, array, index, mode: str, values, kwargs: dict):
        """array.at[index].<mode>(values, **kwargs), recorded: this tracer is among the
        index or the values, `array` is concrete."""
        rec = self._rec
        options = tuple((k, rec.atom(v)) for k, v in kwargs.items())
        return rec.emit(methods.at_update_call(rec.atom(array), rec.atom(index),
                                               methods.AT_MODES[mode], rec.atom(values),
                                               kwargs=options))

    # ---- what a traced value cannot do -----------------------------------------------------
    def __bool__(self):
        raise self._rec.error(TracerBoolConversionError,
                              "the truth value of a traced value was needed (an `if`, "
                              "`while`, `and`/`or` or comparison chain on it)")

    def _concrete(self, what: str):
        raise self._rec.error(ConcretizationTypeError, f"{what} of a traced value was needed")

    def _unknown_structure(self, what: str):
        """`what` of this value was needed: for a parameter traced as one value (no call's
        arguments gave its structure), StructureUnknownError saying so."""
        name = self._var.name
        if name not in self._rec.reserved:
            self._concrete(what)
        raise self._rec.error(StructureUnknownError, (
            f"{what} of a traced value was needed (parameter `{name}`: redraft traces a "
            "list, tuple or dict argument as its structure where it sees the call's "
            f"arguments, but here `{self._rec.name}` was read without them)"))

    def __index__(self):
        self._concrete("a Python int (an index, a size or a range bound)")

    def __int__(self):
        self._concrete("a Python int")

    def __float__(self):
        self._concrete("a Python float")

    def __complex__(self):
        self._concrete("a Python complex")

    def __len__(self):
        self._unknown_structure("the length")

    def __iter__(self):
        n = _unpack_count(sys._getframe(1))
        if n is None:
            self._unknown_structure("the length (to iterate over it)")
        return iter([self[i] for i in range(n)])

    def __array__(self, dtype=None, copy=None):
        self._concrete("a NumPy array")

    def __call__(self, *args, **kwargs):
        self._concrete("a function (a traced argument was called)")


_UNPACK_SEQUENCE = dis.opmap["UNPACK_SEQUENCE"]


def _unpack_count(frame) -> int | None:
    """`n` when the running instruction of `frame` unpacks into n names (`a, b = x`): the
    tracer then unpacks into x[0], ..., x[n-1]; None for any other iteration."""
    code = frame.f_code.co_code
    at = frame.f_lasti
    if 0 <= at < len(code) - 1 and code[at] == _UNPACK_SEQUENCE:
        return code[at + 1]
    return None


class _Method:
    """`x.sum` on a tracer: calling it records the redraft.numpy function behind it."""

    def __init__(self, tracer: Tracer, name: str):
        self.tracer, self.name = tracer, name

    def __call__(self, *args, **kwargs):
        rec = self.tracer._rec
        atoms = tuple(rec.atom(a) for a in args)
        kws = tuple((k, rec.atom(v)) for k, v in kwargs.items())
        return rec.emit(methods.lower_method_call(self.tracer._var, self.name, atoms, kws,
                                                  None))


class _At:
    """`x.at[index].set(value)` (and add, multiply, ...) on a tracer."""

    def __init__(self, tracer: Tracer):
        self.tracer = tracer

    def __getitem__(self, index):
        return _AtIndex(self.tracer, index)


class _AtIndex:
    def __init__(self, tracer: Tracer, index):
        self.tracer, self.index = tracer, index

    def __getattr__(self, mode: str):
        if mode not in methods.AT_MODES:
            raise AttributeError(mode)
        rec = self.tracer._rec

        def update(*args, **kwargs):
            atoms = tuple(rec.atom(a) for a in args)
            options = tuple((k, rec.atom(v)) for k, v in kwargs.items())
            return rec.emit(methods.at_update_call(self.tracer._var, rec.atom(self.index),
                                                   methods.AT_MODES[mode], *atoms,
                                                   kwargs=options))
        return update


def _record_binary(fn, sym: str, reflected: bool):
    ref = ir.Ref(fn, sym)

    def op(self, other):
        rec = self._rec
        pair = (rec.atom(other), self._var) if reflected else (self._var, rec.atom(other))
        return rec.emit(ir.Call(ref, pair))
    return op


def _record_unary(fn, sym: str):
    ref = ir.Ref(fn, sym)

    def op(self):
        return self._rec.emit(ir.Call(ref, (self._var,)))
    return op


_BINARY = {"add": (operator.add, "+"), "sub": (operator.sub, "-"),
           "mul": (operator.mul, "*"), "truediv": (operator.truediv, "/"),
           "floordiv": (operator.floordiv, "//"), "mod": (operator.mod, "%"),
           "pow": (operator.pow, "**"), "matmul": (operator.matmul, "@"),
           "and": (operator.and_, "&"), "or": (operator.or_, "|"),
           "xor": (operator.xor, "^"), "lshift": (operator.lshift, "<<"),
           "rshift": (operator.rshift, ">>")}
_COMPARE = {"lt": (operator.lt, "<"), "le": (operator.le, "<="), "gt": (operator.gt, ">"),
            "ge": (operator.ge, ">="), "eq": (operator.eq, "=="), "ne": (operator.ne, "!=")}
_UNARY = {"neg": (operator.neg, "unary neg"), "pos": (operator.pos, "unary pos"),
          "invert": (operator.invert, "unary invert")}

for _name, (_fn, _sym) in _BINARY.items():
    setattr(Tracer, f"__{_name}__", _record_binary(_fn, _sym, False))
    setattr(Tracer, f"__r{_name}__", _record_binary(_fn, _sym, True))
for _name, (_fn, _sym) in _COMPARE.items():
    setattr(Tracer, f"__{_name}__", _record_binary(_fn, _sym, False))
for _name, (_fn, _sym) in _UNARY.items():
    setattr(Tracer, f"__{_name}__", _record_unary(_fn, _sym))
Tracer.__abs__ = lambda self: self._rec.emit(ir.Call(methods.jnp_ref("abs"), (self._var,)))
