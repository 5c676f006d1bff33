"""The primitive objects the lax functions apply, under JAX's names (`lax.add_p`, ...).

Programs compare an equation's primitive with them (`eqn.primitive is lax.sin_p` over a
`make_jaxpr` result) or key their own tables by them. Each name is the one Primitive its lax
function binds: nothing here is a copy.
"""
from __future__ import annotations

from types import ModuleType

from redraft.compiler.primitives import (bits, collectives, conv, elementwise, fft, gather,
                                         linalg, reductions, shape)
from redraft.compiler.primitives.base import Primitive

_FAMILIES: tuple[ModuleType, ...] = (elementwise, shape, reductions, linalg, conv, gather, fft,
                                     collectives, bits)


def _declared(module: ModuleType) -> dict[str, Primitive]:
    """The module's public `<name>_p` primitives."""
    return {k: v for k, v in vars(module).items()
            if k.endswith("_p") and not k.startswith("_") and isinstance(v, Primitive)}


PRIMITIVES: dict[str, Primitive] = {k: v for m in _FAMILIES for k, v in _declared(m).items()}
