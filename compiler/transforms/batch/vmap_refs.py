"""How batched code spells the functions it calls: `jnp.sum`, `lax.dot_general`, `vm.align`."""
from __future__ import annotations

from redraft.compiler.core import ir


def jnp_ref(name: str) -> ir.Ref:
    import redraft.numpy as jnp
    return ir.Ref(getattr(jnp, name), f"jnp.{name}", jnp)


def lax_ref(name: str) -> ir.Ref:
    from redraft import lax
    return ir.Ref(getattr(lax, name), f"lax.{name}", lax)


def vm_ref(name: str) -> ir.Ref:
    """Ref to `vm.<name>` (compiler/transforms/runtime/vm/__init__.py)."""
    from redraft.compiler.transforms.runtime import vm
    return ir.Ref(getattr(vm, name), f"vm.{name}", vm)


def builtin_ref(obj, name: str) -> ir.Ref:
    return ir.Ref(obj, name)
