"""The target machine builds are compiled for: the host CPU (or a named one), emitting
position-independent code, since the objects go into a shared library."""
from __future__ import annotations

import functools
import hashlib

import llvmlite.binding as llvm


@functools.cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def target_machine(cpu: str | None = None, opt_level: int = 3) -> llvm.TargetMachine:
    """A PIC target machine for `cpu` (None: this host, with its exact feature string)."""
    _initialise()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    if cpu is None or cpu == "host":
        name, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    else:
        name, features = cpu, ""
    return target.create_target_machine(cpu=name, features=features, opt=opt_level,
                                        reloc="pic", codemodel="default")


def cpu_description(cpu: str | None = None) -> str:
    """What code compiled for `cpu` depends on: triple, CPU name and features."""
    _initialise()
    if cpu is None or cpu == "host":
        cpu = f"{llvm.get_host_cpu_name()}+{llvm.get_host_cpu_features().flatten()}"
    return f"{llvm.get_process_triple()}/{cpu}"


def cpu_key(cpu: str | None = None) -> str:
    return hashlib.sha256(cpu_description(cpu).encode()).hexdigest()[:16]
