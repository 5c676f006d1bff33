"""Print SSA IR in a jaxpr-like text form (the grammar is in ssa.py)."""
from __future__ import annotations

from redraft.compiler.ir.ssa import Block, Eqn, Function, Literal, Value

INDENT = "  "


class Namer:
    """Short, stable names a, b, ..., z, ba, bb, ... in order of first appearance."""

    def __init__(self):
        self.names: dict[int, str] = {}

    def __call__(self, v: Value) -> str:
        if v.id not in self.names:
            n, s = len(self.names), ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n //= 26
                if n == 0:
                    break
            self.names[v.id] = s
        return self.names[v.id]


def _atom(a, name: Namer) -> str:
    if isinstance(a, Literal):
        return repr(a)
    return name(a)


def _typed(v: Value, name: Namer) -> str:
    return f"{name(v)}:{v.aval.str_short()}"


def _param_text(value) -> str:
    if isinstance(value, tuple):
        inner = ",".join(_param_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if hasattr(value, "name") and hasattr(value, "kind"):  # a dtype
        return value.name
    return repr(value) if not isinstance(value, str) else value


def _eqn(eqn: Eqn, name: Namer, depth: int, lines: list[str]) -> None:
    outs = " ".join(_typed(v, name) for v in eqn.outs)
    params = ""
    shown = {k: v for k, v in eqn.params.items() if not k.startswith("_")}
    if shown:
        params = "[" + " ".join(f"{k}={_param_text(v)}" for k, v in shown.items()) + "]"
    ins = " ".join(_atom(a, name) for a in eqn.ins)
    head = f"{outs} = " if outs else ""
    lines.append(f"{INDENT * depth}{head}{eqn.prim.name}{params} {ins}".rstrip())
    for region in eqn.regions:
        _block(region, name, depth + 1, lines, braces=True)


def _block(block: Block, name: Namer, depth: int, lines: list[str], braces: bool) -> None:
    params = " ".join(_typed(v, name) for v in block.params)
    if braces:
        lines.append(f"{INDENT * depth}{{ {params} .".replace("{  .", "{ ."))
    for eqn in block.eqns:
        _eqn(eqn, name, depth + 1, lines)
    results = " ".join(_atom(a, name) for a in block.results)
    if braces:
        lines.append(f"{INDENT * depth}  yield {results} }}")


def print_function(fn: Function) -> str:
    """The text of `fn`: `{ lambda name ; a:f32[3]. let ... in (b,) }`."""
    name = Namer()
    params = " ".join(_typed(v, name) for v in fn.body.params)
    lines = [f"{{ lambda {fn.name} ; {params}. let"]
    for eqn in fn.body.eqns:
        _eqn(eqn, name, 1, lines)
    results = ", ".join(_atom(a, name) for a in fn.body.results)
    lines.append(f"  in ({results}{',' if len(fn.body.results) == 1 else ''}) }}")
    return "\n".join(lines)
