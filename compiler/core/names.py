"""Fresh names for Core: the one generator the frontend, SSA renaming and every transform use.

A name is never one already taken. Two spellings of "new":

- `local(base)`: the name the user or the frontend chose, kept as spelled when free, else
  `base_1`, `base_2`, ... (SSA versions of a reassigned name, a lowered lambda);
- `fresh(base)`: a value a transform introduces (`x_dot`, `x_bar`, `out`): as `local`, but a
  trailing `_` is dropped and a base spelled like a temporary (`t`, `t7`) gets the next
  numbered temporary, so temporaries stay one numbered series;
- `temp()`: the next numbered temporary `t7`.
"""
from __future__ import annotations

from typing import Iterable

from redraft.compiler.core import ir


def is_temp(name: str) -> bool:
    """`t7`-style generated temporaries."""
    return len(name) > 1 and name[0] == "t" and name[1:].isdigit()


def function_names(fn: ir.Function) -> set[str]:
    """Every name `fn` binds or reads: its parameters, what it assigns, the free names it
    reads and the names its generated module binds for objects (`random` of `random.gamma`,
    a global array's `const_1`, a captured key's `k`), which a new name must not shadow."""
    names = set(fn.params) | ir.block_reads(fn.body)
    for s in ir.walk_stmts(fn.body):
        names |= ir.stmt_writes(s)
        for expr in (getattr(s, "expr", None), getattr(s, "value", None),
                     getattr(s, "cond", None), getattr(s, "iter", None)):
            names |= _bound_names(expr)
    return names


def _bound_names(expr) -> set[str]:
    """The first names of the paths of the objects (Refs) an expression spells."""
    if isinstance(expr, ir.Ref):
        return {expr.path.split(".")[0]} if expr.path.split(".")[0].isidentifier() else set()
    if isinstance(expr, ir.Call):
        parts = [expr.fn, *expr.args, *(a for _, a in expr.kwargs), expr.star_args]
    elif isinstance(expr, (ir.Tuple, ir.List)):
        parts = list(expr.items)
    elif isinstance(expr, ir.Attr):
        parts = [expr.obj]
    else:
        return set()
    out: set[str] = set()
    for part in parts:
        out |= _bound_names(part)
    return out


class Names:
    """The names taken in one function, and new ones that are not."""

    def __init__(self, taken: ir.Function | set[str] | Iterable[str] = (),
                 temps_from: int | None = None):
        """`taken`: a function (every name it binds or reads is taken), or a
        set of names, which is shared (names the caller adds later are taken too).
        `temps_from`: number temporaries from there (default: after the highest taken)."""
        if isinstance(taken, ir.Function):
            taken = function_names(taken)
        self.used: set[str] = taken if isinstance(taken, set) else set(taken)
        self.derived: dict[tuple[str, str], str] = {}
        self.last_temp: int | None = temps_from

    def local(self, base: str) -> str:
        """`base` itself when free, else `base_1`, `base_2`, ..."""
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def fresh(self, base: str) -> str:
        """A new name for a value derived from `base` (see the module doc)."""
        base = base.rstrip("_") or "t"
        if base == "t" or is_temp(base):
            return self.temp()
        return self.local(base)

    def temp(self) -> str:
        """The next numbered temporary, `t7`, after every one the function already has."""
        if self.last_temp is None:
            self.last_temp = max((int(n[1:]) for n in self.used if is_temp(n)), default=0)
        self.last_temp += 1
        while f"t{self.last_temp}" in self.used:
            self.last_temp += 1
        name = f"t{self.last_temp}"
        self.used.add(name)
        return name

    def derived_name(self, var: str, suffix: str) -> str:
        """The one name of `var`'s tangent (suffix 'dot') or cotangent ('bar')."""
        key = (var, suffix)
        if key not in self.derived:
            self.derived[key] = self.fresh(f"{var}_{suffix}")
        return self.derived[key]
