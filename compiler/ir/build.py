"""Builder: records IR equations while staging (Arrays over StagedBufs hand their
operations here through `bind`), with a stack of open blocks for control-flow regions."""
from __future__ import annotations

from typing import Callable

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.ir.ssa import Block, Eqn, Function, Literal, Value
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.errors import UnexpectedTracerError
from redraft.runtime.staged import StagedBuf


# primitive name -> callbacks told of each equation of it that staging records, so that a
# backend can start work an equation will need while staging goes on (the LLVM backend
# compiles its matmul kernel from the first product that runs on it: backend/llvm/dot.py)
_WATCHERS: dict[str, tuple[Callable[[Eqn], None], ...]] = {}


def watch_staged(prim_name: str, callback: Callable[[Eqn], None]) -> None:
    """Call `callback(eqn)` for each equation of primitive `prim_name` staging records."""
    if callback not in _WATCHERS.get(prim_name, ()):
        _WATCHERS[prim_name] = _WATCHERS.get(prim_name, ()) + (callback,)


def aval_of(x: Array) -> ShapedArray:
    buf = x._buf
    if type(buf) is StagedBuf:
        return ShapedArray(buf.shape, buf.dtype, x._weak)
    return ShapedArray(buf.shape, buf.dtype, x._weak)


class Builder:
    """One staging session: the function's body and any open nested blocks."""

    def __init__(self, name: str):
        self.name = name
        self.blocks: list[Block] = [Block([], [], [])]
        self.origin: tuple[str, int] | None = None

    # ---- values -----------------------------------------------------------------------------
    def wrap(self, value: Value) -> Array:
        return wrap_host(StagedBuf(value.aval, value, self), value.aval.weak_type)

    def new_param(self, aval: ShapedArray) -> Array:
        """A parameter of the innermost open block, as a staged Array."""
        v = Value(aval)
        self.blocks[-1].params.append(v)
        return self.wrap(v)

    def atom(self, x) -> Value | Literal:
        """The IR operand for an Array (staged value or constant) or a Python scalar."""
        if isinstance(x, Array):
            buf = x._buf
            if type(buf) is StagedBuf:
                if buf.builder is not self:
                    raise UnexpectedTracerError(
                        "a value staged by another jit call leaked into this one (was it "
                        "stored in a global or a closure while compiling?)")
                return buf.value
            arr = np.asarray(buf)
            if _is_splat(arr):
                return self._splat(arr, x._weak)
            return Literal(arr, ShapedArray(arr.shape, arr.dtype, x._weak))
        from redraft.runtime.convert import as_array
        return self.atom(as_array(x))

    def _splat(self, arr: np.ndarray, weak: bool) -> Value:
        """A constant that is one value repeated (grad's seed spread over a sum's operand,
        then scaled): a scalar literal and a broadcast, not a literal of `arr.size` copies."""
        from redraft.compiler.primitives.shape import broadcast_in_dim_p
        scalar = wrap_host(np.array(arr.reshape(-1)[0], arr.dtype), weak)
        out = self.stage(broadcast_in_dim_p, [scalar],
                         {"shape": tuple(arr.shape), "broadcast_dimensions": ()})
        return out._buf.value

    # ---- equations ---------------------------------------------------------------------------
    def stage(self, prim, args, params: dict):
        """Record `prim(*args, **params)`; returns staged Array(s) of its result type."""
        ins = [self.atom(a) for a in args]
        out = abstract_eval_rules[prim](*(a.aval for a in ins), **params)
        weak = prim.result_weak([a._weak for a in args], params)
        outs_avals = out if prim.multiple_results else (out,)
        outs = [Value(ShapedArray(o.shape, o.dtype, weak)) for o in outs_avals]
        eqn = Eqn(prim, ins, outs, dict(params), [], self.origin)
        self.blocks[-1].eqns.append(eqn)
        if prim.name in _WATCHERS:
            for callback in _WATCHERS[prim.name]:
                callback(eqn)
        arrays = [self.wrap(v) for v in outs]
        return tuple(arrays) if prim.multiple_results else arrays[0]

    def emit(self, prim, ins: list, out_avals: list[ShapedArray], params: dict,
             regions: list[Block]) -> list[Array]:
        """Record an equation whose output types the caller computed (control flow)."""
        outs = [Value(a) for a in out_avals]
        self.blocks[-1].eqns.append(Eqn(prim, ins, outs, dict(params), regions, self.origin))
        return [self.wrap(v) for v in outs]

    # ---- blocks ----------------------------------------------------------------------------
    def open_block(self, block: Block | None = None) -> Block:
        block = block if block is not None else Block([], [], [])
        self.blocks.append(block)
        return block

    def close_block(self) -> Block:
        return self.blocks.pop()

    def finish(self, results: list) -> Function:
        assert len(self.blocks) == 1, "unclosed blocks"
        body = self.blocks[0]
        body.results = [self.atom(r) for r in results]
        return Function(self.name, body)


def _is_splat(arr: np.ndarray) -> bool:
    """Whether every element of `arr` (more than one) has the same bits as the first."""
    if arr.size < 2:
        return False
    if not any(arr.strides):
        return True  # a broadcast view of one value
    if arr.itemsize not in (1, 2, 4, 8):
        return bool((arr == arr.flat[0]).all())
    bits = np.ascontiguousarray(arr).view(np.dtype(f"u{arr.itemsize}")).reshape(-1)
    return bool(bits[0] == bits[-1] and (bits == bits[0]).all())
