"""One LLVM function per IR function: buffers in, buffers out, every equation lowered.

The generated function is `void name(ptr in0, ..., ptr out0, ..., ptr workspace)` over raw
data pointers, plus `name_py` taking the NumPy arrays themselves (PyObject pointers; it
reads each array's data pointer, which is cheaper than asking ctypes for it). Parameters
are read where they are; results that an equation computes are written straight into the
output arrays; other arrays live in the workspace (see storage.py) and scalars in stack
slots. Equations lower through `LOWERINGS`, a table keyed by primitive name that the
family modules (nests.py, shapes.py, dot.py, control.py) fill; an equation none of them
computes (a primitive without a rule, complex arithmetic) becomes a call back into the
reference interpreter for that equation alone (host_kernels.py), so one such operation no
longer sends the whole function to the interpreter.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir
from redraft.compiler.ir.ssa import Block, Eqn, Function, Literal, Value

from .loops import CodeContext, copy
from .storage import ALIGN, Liveness, Workspace
from .types import I8, PTR, VOID, Unsupported, check_dtype, i64, memory_type
from .views import View

Lowering = Callable[["FunctionLowering", Eqn], None]
LOWERINGS: dict[str, Lowering] = {}
COMPLEX_AWARE: set[str] = set()  # lowerings that take complex operands (they move, not compute)
ON_HOST: list[Lowering] = []     # how an equation no lowering computes runs (host_kernels.py)
STACK_WORKSPACE = 128 * 1024     # workspaces up to this size live on the caller's stack
# constants larger than this are not written into the module's text (LLVM IR text of a
# 16 MB captured array took ~1.5 s to print and parse): the code reads them where NumPy
# holds them, through a symbol defined when the module is compiled
EXTERNAL_CONSTANT_BYTES = 64 * 1024
_EXTERNAL_NAMES = itertools.count(1)  # the symbols are process-wide: numbered once
PYOBJECT_DATA_OFFSET = 16        # offsetof(PyArrayObject, data) on CPython builds


def lowering(*names: str, complex_ok: bool = False):
    """Register a lowering for the primitives `names`; `complex_ok`: it handles complex
    operands and results (every other lowering sees only real and integer values)."""
    def register(fn: Lowering) -> Lowering:
        for name in names:
            LOWERINGS[name] = fn
            if complex_ok:
                COMPLEX_AWARE.add(name)
        return fn
    return register


def computes_natively(eqn: Eqn) -> bool:
    """Whether a lowering computes `eqn` in the generated code: it has one, and it is made
    for the equation's types (no lowering computes with complex numbers)."""
    if eqn.prim.name not in LOWERINGS:
        return False
    if eqn.prim.name in COMPLEX_AWARE:
        return True
    return not any(a.aval.dtype.kind == "c" for a in list(eqn.ins) + list(eqn.outs))


@dataclass
class ResultPlan:
    """How the runner produces each result: an output slot the code writes, an argument
    passed through, a constant, or a duplicate of an earlier result."""
    kind: str                  # "out", "param", "literal", "dup"
    index: int = 0
    value: np.ndarray | None = None


@dataclass
class LoweredFunction:
    module: ir.Module
    name: str
    in_specs: list[tuple[tuple[int, ...], np.dtype]]
    out_specs: list[tuple[tuple[int, ...], np.dtype]]
    results: list[ResultPlan]
    workspace_bytes: int
    stack_workspace: bool
    keepalive: list = field(default_factory=list)
    constants: dict[str, np.ndarray] = field(default_factory=dict)  # external symbol: data


class FunctionLowering:
    """Lowers one IR function into `module`."""

    def __init__(self, fn: Function, module: ir.Module, name: str,
                 external_constants: bool = True):
        self.fn = fn
        self.external_constants = external_constants  # False: a module that stands alone
        self.constants: dict[str, np.ndarray] = {}
        self.module = module
        self.name = name
        self.live = Liveness(fn)
        self.ws = Workspace()
        self.views: dict[int, View] = {}
        self.dests: dict[int, View] = {}
        self.keepalive: list = []
        self.family_state: dict[str, object] = {}  # a lowering family's per-function notes
        self.in_specs = [(tuple(p.aval.shape), check_dtype(p.aval.dtype)) for p in fn.params]
        self.results, self.out_values = self._plan_results()
        self.out_specs = [(tuple(v.aval.shape), check_dtype(v.aval.dtype))
                          for v in self.out_values]
        n_args = len(self.in_specs) + len(self.out_specs) + 1
        self.func = ir.Function(module, ir.FunctionType(VOID, [PTR] * n_args), name=name)
        self.func.attributes.add("nounwind")
        for arg in self.func.args[:-1]:
            arg.add_attribute("noalias")
        entry = self.func.append_basic_block("entry")
        body = self.func.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.cx = CodeContext(self.b, entry)
        self.cx.scratch = self._scratch
        self.workspace = self.func.args[-1]
        self.position = 0

    # ---- results --------------------------------------------------------------------------

    def _plan_results(self) -> tuple[list[ResultPlan], list[Value]]:
        params = {p.id: k for k, p in enumerate(self.fn.params)}
        plans, outs, seen = [], [], {}
        for k, r in enumerate(self.fn.results):
            if isinstance(r, Literal):
                check_dtype(r.aval.dtype)
                value = np.array(r.value, dtype=r.aval.dtype)
                value.flags.writeable = False
                plans.append(ResultPlan("literal", value=value))
            elif r.id in params:
                plans.append(ResultPlan("param", params[r.id]))
            elif r.id in seen:
                plans.append(ResultPlan("dup", seen[r.id]))
            else:
                seen[r.id] = k
                plans.append(ResultPlan("out", len(outs)))
                outs.append(r)
        return plans, outs

    # ---- the function ---------------------------------------------------------------------

    def lower(self) -> LoweredFunction:
        n_in = len(self.in_specs)
        for k, p in enumerate(self.fn.params):
            self.views[p.id] = View.contiguous(self.func.args[k], *self._shape_dtype(p))
        for k, v in enumerate(self.out_values):
            self.dests[v.id] = View.contiguous(self.func.args[n_in + k], *self._shape_dtype(v))
        self.lower_block(self.fn.body)
        for v in self.out_values:  # results computed elsewhere (e.g. views): copy them out
            view = self.views[v.id]
            if view != self.dests[v.id]:
                copy(self.cx, view, self.dests[v.id])
        self.b.ret_void()
        ir.IRBuilder(self.cx.entry).branch(self.func.blocks[1])
        stack = self.ws.size <= STACK_WORKSPACE
        self._emit_python_entry(stack)
        if pyobject_offset_ok():  # only name_py is called: compile the body once, inlined
            self.func.linkage = "internal"
        return LoweredFunction(self.module, self.name, self.in_specs, self.out_specs,
                               self.results, self.ws.size, stack, self.keepalive,
                               self.constants)

    def _emit_python_entry(self, stack: bool) -> None:
        """`name_py(PyObject* arrays...)`: read the data pointers and call the body."""
        n = len(self.func.args)
        wrapper = ir.Function(self.module, ir.FunctionType(VOID, [PTR] * n),
                              name=self.name + "_py")
        wrapper.attributes.add("nounwind")
        b = ir.IRBuilder(wrapper.append_basic_block("entry"))
        data = []
        for obj in wrapper.args[:-1]:
            field_ptr = b.gep(obj, [i64(PYOBJECT_DATA_OFFSET)], source_etype=I8)
            data.append(b.load(field_ptr, typ=PTR, align=8))
        if stack:
            ws = b.alloca(I8, size=max(self.ws.size, ALIGN))
            ws.align = ALIGN
        else:
            field_ptr = b.gep(wrapper.args[-1], [i64(PYOBJECT_DATA_OFFSET)], source_etype=I8)
            ws = b.load(field_ptr, typ=PTR, align=8)
        b.call(self.func, data + [ws])
        b.ret_void()

    @staticmethod
    def _shape_dtype(v: Value) -> tuple[np.dtype, tuple[int, ...]]:
        return check_dtype(v.aval.dtype), tuple(v.aval.shape)

    # ---- blocks and equations -----------------------------------------------------------------

    def lower_block(self, block: Block, params: list[View] | None = None) -> None:
        for p, view in zip(block.params, params or []):
            self.views[p.id] = view
        for eqn in block.eqns:
            self.lower_eqn(eqn)
            if id(eqn) in self.live.end:  # not inside a fused region lowered eqn by eqn:
                self.release_dead(self.live.end[id(eqn)])  # its operands live to its end

    def lower_eqn(self, eqn: Eqn) -> None:
        """Lower `eqn` with its family's rule, or, where none computes it, as a call that
        runs it on the host with the reference interpreter (the rest stays compiled)."""
        rule = LOWERINGS.get(eqn.prim.name)
        if not computes_natively(eqn):
            if not ON_HOST:
                raise Unsupported(f"primitive {eqn.prim.name}")
            rule = ON_HOST[0]
        for v in eqn.outs:
            check_dtype(v.aval.dtype)
        self.position = self.live.pos.get(id(eqn), self.position)
        rule(self, eqn)

    def release_dead(self, position: int) -> None:
        for owner in list(self.ws.owner):
            if self.live.last_use(owner) <= position:
                self.ws.release(owner)

    # ---- operands and destinations --------------------------------------------------------

    def read(self, a) -> View:
        """The view of an operand (literals become constants or module globals)."""
        if isinstance(a, Literal):
            return self.literal_view(a)
        return self.views[a.id]

    def literal_view(self, lit: Literal) -> View:
        dtype = check_dtype(lit.aval.dtype)
        value = np.asarray(lit.value, dtype)
        if value.size and np.all(value == value.flat[0]) and not np.isnan(
                value.flat[0] if dtype.kind == "f" else 0):
            return View.constant(value.flat[0], dtype, value.shape)
        if value.size == 0:
            return View.constant(0, dtype, value.shape)
        data = np.ascontiguousarray(value)
        if dtype.kind == "b":
            data = data.astype(np.uint8)
        ty = ir.ArrayType(I8, data.nbytes)
        if self.external_constants and data.nbytes > EXTERNAL_CONSTANT_BYTES:
            name = f"redraft_const_data_{next(_EXTERNAL_NAMES)}"
            g = ir.GlobalVariable(self.module, ty, name)  # a declaration: defined at compile
            g.global_constant = True
            self.constants[name] = np.array(data, copy=True)  # the caller's may change later
            return View.contiguous(g, dtype, value.shape)
        g = ir.GlobalVariable(self.module, ty, self.cx.unique("redraft_const"))
        g.initializer = ir.Constant(ty, bytearray(data.tobytes()))
        g.global_constant = True
        g.linkage = "internal"
        g.align = ALIGN
        return View.contiguous(g, dtype, value.shape)

    def scalar(self, a) -> ir.Value:
        """The register value of a scalar operand (bool as i1)."""
        from .loops import load
        from .types import constant
        view = self.read(a)
        if view.const is not None:
            return constant(view.dtype, view.const)
        return load(self.b, view.base, view.dtype, i64(view.offset))

    def dest(self, v: Value, reusable: list | None = None, others: list | None = None) -> View:
        """Where `v` is written: its preassigned place, an operand's dying buffer (given in
        `reusable` as (atom, view) pairs read pointwise; `others` lists every operand, so
        that a buffer also read through another view is not overwritten), a stack slot for
        scalars, or a fresh workspace slice."""
        if v.id in self.dests:
            return self.dests[v.id]
        dtype, shape = self._shape_dtype(v)
        if shape == ():
            slot = self.cx.entry_alloca(memory_type(dtype))
            return View.contiguous(slot, dtype, ())
        for a, view in reusable or []:
            taken = self._take_over(a, view, v, others or [])
            if taken is not None:
                return taken
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        offset = self.ws.allocate(v.id, nbytes)
        return View(self.workspace, dtype, shape, View.contiguous(None, dtype, shape).strides,
                    offset // dtype.itemsize)

    def _take_over(self, a, view: View, v: Value, others: list) -> View | None:
        """`v` written over operand `a`'s buffer, when `a` dies here, is read pointwise, and
        no other operand reads the buffer through a different view."""
        if not isinstance(a, Value):
            return None
        owner = self.live.find(a.id)
        if any(isinstance(b, Value) and self.live.find(b.id) == owner and w != view
               for b, w in others):
            return None
        slot = self.ws.owner.get(owner)
        dtype, shape = self._shape_dtype(v)
        if slot is None or self.live.last_use(owner) != self.position:
            return None
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if (view.base is not self.workspace or not view.is_contiguous()
                or view.shape != shape or view.offset * view.dtype.itemsize != slot[0]
                or view.dtype.itemsize != dtype.itemsize or -(-nbytes // ALIGN) * ALIGN
                > slot[1]):
            return None
        self.ws.transfer(owner, v.id)
        return View(self.workspace, dtype, shape, view.strides, slot[0] // dtype.itemsize)

    def temporary(self, dtype: np.dtype, shape: tuple[int, ...], kept_by_loop: bool = False
                  ) -> tuple[View, int]:
        """A fresh workspace array (release it with `self.ws.release(key)`). `kept_by_loop`:
        it lives across the iterations of the loop being lowered (Workspace.allocate_fresh)."""
        self._temps = getattr(self, "_temps", 0) + 1
        key = -self._temps
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        allocate = self.ws.allocate_fresh if kept_by_loop else self.ws.allocate
        offset = allocate(key, nbytes)
        view = View(self.workspace, dtype, tuple(shape),
                    View.contiguous(None, dtype, shape).strides, offset // dtype.itemsize)
        return view, key

    def _scratch(self, dtype: np.dtype, shape: tuple[int, ...]):
        view, key = self.temporary(dtype, shape)
        return view, lambda: self.ws.release(key)

    def bind_copy(self, v: Value, view: View) -> None:
        """`v` gets a buffer of its own holding `view` (for results that would otherwise
        alias a buffer whose lifetime liveness does not connect to `v`)."""
        dest = self.dest(v)
        if dest != view:
            copy(self.cx, view, dest)
        self.views[v.id] = dest

    def bind(self, v: Value, view: View) -> None:
        """`v` now lives at `view`; if it had a preassigned place, copy it there."""
        target = self.dests.get(v.id)
        if target is not None and target != view:
            copy(self.cx, view, target)
            view = target
        self.views[v.id] = view


@functools.cache
def pyobject_offset_ok() -> bool:
    """Check that an ndarray's data pointer sits where `name_py` reads it."""
    probe = np.arange(4.0)
    return ctypes.c_void_p.from_address(id(probe) + PYOBJECT_DATA_OFFSET).value == (
        probe.ctypes.data)


