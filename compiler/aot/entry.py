"""One entry point: a function at one signature, staged, optimised and lowered to an LLVM
module whose one external function is `symbol(in..., out..., workspace)`."""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field

from redraft.compiler.ir.ssa import Function, walk_eqns
from redraft.runtime.pytree import PyTreeDef, tree_flatten
from redraft.kernels.jit_host import close_llvm

from .exports import Export, parse_signature, short_type
from .objects import (
    NotStandalone,
    check_standalone,
    internalise,
    llvm_lock,
    parse,
    undefined_functions,
)


class BuildError(RuntimeError):
    """A build failed; the message names the user's file and line and the function."""


@dataclass
class Entry:
    """What the glue, the header and the package need to call one entry point."""
    export: str                  # the exported name
    index: int                   # which of its signatures
    symbol: str                  # the LLVM function: symbol(in..., out..., workspace)
    signature: str
    source: str                  # "file:line" of the function's definition
    ins: list[tuple[tuple[int, ...], str]]     # (shape, dtype name) per input leaf
    in_paths: list[str]          # each input leaf's place in the arguments, e.g. "arg0['a']"
    in_tree: object              # the arguments' pytree structure (see tree_json)
    outs: list[tuple[tuple[int, ...], str]]    # per result leaf
    out_paths: list[str]
    out_tree: object
    results: list[tuple[str, int, list | None]]  # (kind, index, literal value) per result
    workspace: int               # bytes of workspace the code needs
    needs: list[str] = field(default_factory=list)   # functions it calls from outside
    llvm_ir: str = ""            # the optimised module (for object code)
    times: dict[str, float] = field(default_factory=dict)

    @property
    def n_code_outs(self) -> int:
        return sum(1 for kind, _, _ in self.results if kind == "out")


def compile_entry(export: Export, index: int, symbol: str) -> Entry:
    """Stage, optimise and lower `export` at its `index`-th signature."""
    from redraft.compiler import driver
    from redraft.compiler.backend.llvm import Unsupported, lower_function
    from redraft.compiler.backend.llvm.codegen import optimise
    from redraft.compiler.ir.passes import run_pipeline
    from redraft.compiler.ir.verify import verify

    text = export.signatures[index]
    label = f"{export.name}({text})"
    times: dict[str, float] = {}
    try:
        args = parse_signature(text)
        start = time.perf_counter()
        ir_fn, out_tree = driver.stage(export.fun, args, set(), name=export.name)
        verify(ir_fn)
        _check_types(args, ir_fn, export, label)
        times["staging"] = time.perf_counter() - start
        start = time.perf_counter()
        ir_fn = run_pipeline(ir_fn)
        times["passes"] = time.perf_counter() - start
        start = time.perf_counter()
        _check_no_print(ir_fn, export, label)
        lowered = lower_function(ir_fn, name=symbol, standalone=True)
        internalise(lowered.module, {symbol})
        with llvm_lock():
            llmod = parse(lowered.module)
            try:
                optimise(llmod)
                check_standalone(llmod)
                needs, llvm_text = sorted(undefined_functions(llmod)), str(llmod)
            finally:
                close_llvm(llmod)  # under the lock, not where Python would drop it
        times["codegen"] = time.perf_counter() - start
    except BuildError:
        raise
    except Unsupported as e:
        raise BuildError(f"{_where(export)}: {label}: the LLVM backend cannot lower {e}, "
                         "and a built library cannot fall back to redraft's interpreter"
                         ) from None
    except NotStandalone as e:
        raise BuildError(f"{_where(export)}: {label}: {e}; a built library cannot") from None
    except Exception as e:
        raise BuildError(f"{_where(export)}: {label}: {type(e).__name__}: {e}") from e
    return _describe(export, index, symbol, args, ir_fn, out_tree, lowered, needs, llvm_text,
                     times)


def _check_types(args: tuple, ir_fn: Function, export: Export, label: str) -> None:
    """Every argument is compiled at the type the signature names (redraft, like JAX by
    default, computes in 32 bits: an f64 or i64 argument would silently become f32/i32)."""
    leaves, _ = tree_flatten(tuple(args))
    for a, p in zip(leaves, ir_fn.params):
        if a.dtype != p.aval.dtype:
            raise BuildError(f"{export.where()}: {label}: redraft computes {short_type(a)} "
                             f"as {p.aval.str_short()} (32-bit types, JAX's default); "
                             "export the 32-bit signature instead")


def _check_no_print(ir_fn: Function, export: Export, label: str) -> None:
    for eqn in walk_eqns(ir_fn.body):
        if eqn.prim.name == "debug_print":
            where = f"{eqn.origin[0]}:{eqn.origin[1]}" if eqn.origin else _where(export)
            raise BuildError(f"{where}: {label} prints at run time, which calls back into "
                             "Python; a built library cannot (remove the print)")


def _where(export: Export) -> str:
    """The user's definition of the function (through jit, grad and vmap wrappers), else
    the export declaration."""
    target = inspect.unwrap(getattr(export.fun, "__redraft_primal__", export.fun))
    target = inspect.unwrap(getattr(target, "_vmap_fun", target))
    code = getattr(target, "__code__", None)
    if code is None or (getattr(target, "__module__", None) or "").startswith("redraft."):
        return export.where()
    return f"{code.co_filename}:{code.co_firstlineno}"


def _describe(export, index, symbol, args, ir_fn, out_tree, lowered, needs: list[str],
              llvm_text: str, times) -> Entry:
    _, in_tree = tree_flatten(tuple(args))
    outs = [(tuple(r.aval.shape), str(r.aval.dtype)) for r in ir_fn.results]
    results = []
    for plan in lowered.results:
        value = plan.value.tolist() if plan.value is not None else None
        results.append((plan.kind, plan.index, value))
    return Entry(
        export=export.name, index=index, symbol=symbol, signature=export.signatures[index],
        source=_where(export),
        ins=[(tuple(s), str(d)) for s, d in lowered.in_specs],
        in_paths=leaf_paths(in_tree, "arg"),
        in_tree=tree_json(in_tree),
        outs=outs,
        out_paths=leaf_paths(out_tree, "out"),
        out_tree=tree_json(out_tree),
        results=results,
        workspace=lowered.workspace_bytes,
        needs=needs,
        llvm_ir=llvm_text,
        times=times,
    )


def tree_json(tree: PyTreeDef):
    """A pytree structure as plain data the built package can rebuild without redraft:
    "*" for a leaf, ["tuple"|"list", children], ["dict", keys, children], ["none"]."""
    if tree.kind is None:
        return "*"
    children = [tree_json(c) for c in tree.children]
    if tree.kind is tuple:
        return ["tuple", children]
    if tree.kind is list:
        return ["list", children]
    if tree.kind is dict:
        return ["dict", list(tree.aux), children]
    if tree.kind is type(None):
        return ["none"]
    raise BuildError(f"built functions take and return tuples, lists, dicts and None; "
                     f"not {tree.kind.__name__} (a custom pytree node)")


def leaf_paths(tree: PyTreeDef, root: str) -> list[str]:
    """Each leaf's place, as code would index it: arg0['w'][1], out[0], ..."""
    if tree.kind is None:
        return [root]
    if tree.kind is type(None):
        return []
    keys = list(tree.aux) if tree.kind is dict else range(len(tree.children))
    paths = []
    for key, child in zip(keys, tree.children):
        if root == "arg" and tree.kind is tuple:
            sub = f"arg{key}"
        else:
            sub = f"{root}[{key!r}]"
        paths += leaf_paths(child, sub)
    return paths


def describe_leaf(shape, dtype: str) -> str:
    import numpy as np
    return short_type(np.zeros(shape, dtype))
