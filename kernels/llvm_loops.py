"""The one counted loop every LLVM IR emitter in redraft builds on (kernels and backend)."""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

I64 = ir.IntType(64)


def for_range(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: int | ir.Value,
              init: list, body: Callable[[ir.Value, list], list], name: str) -> list:
    """for (i = start; i < stop; i += step) carried = body(i, carried); returns the carried
    values after the loop, with `b` positioned after it."""
    step = ir.Constant(I64, step) if isinstance(step, int) else step
    fn = b.function
    head = fn.append_basic_block(f"{name}.head")
    work = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    pre = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name=f"{name}.i")
    i.add_incoming(start, pre)
    phis = []
    for value in init:
        phi = b.phi(value.type)
        phi.add_incoming(value, pre)
        phis.append(phi)
    b.cbranch(b.icmp_signed("<", i, stop), work, done)
    b.position_at_end(work)
    new = body(i, phis)
    i.add_incoming(b.add(i, step), b.block)
    for phi, value in zip(phis, new):
        phi.add_incoming(value, b.block)
    b.branch(head)
    b.position_at_end(done)
    return phis


def counted_loop(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: int | ir.Value,
                 body: Callable[[ir.Value], None], name: str) -> None:
    """for (i = start; i < stop; i += step) body(i), carrying nothing."""
    for_range(b, start, stop, step, [], lambda i, _: (body(i), [])[1], name)
