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
        if isinstance(s, ir.Assign):
            names.update(s.targets)
        elif isinstance(s, ir.For):
            names.add(s.target)
        for expr in (getattr(s, "expr", None), getattr(s, "value", None),
                     getattr(s, "cond", None), getattr(s, "iter", None)):
            _add_bound_names(expr, names)
    return names


def _bound_names(expr) -> set[str]:
    """The first names of the paths of the objects (Refs) an expression spells."""
    out: set[str] = set()
    _add_bound_names(expr, out)
    return out


def _add_bound_names(expr, out: set[str]) -> None:
    """`_bound_names(expr)` added to `out` (no set made for each atom)."""
    if isinstance(expr, ir.Ref):
        head = expr.path.split(".")[0]
        if head.isidentifier():
            out.add(head)
        return
    if isinstance(expr, ir.Call):
        _add_bound_names(expr.fn, out)
        for a in expr.args:
            _add_bound_names(a, out)
        for _, a in expr.kwargs:
            _add_bound_names(a, out)
        _add_bound_names(expr.star_args, out)
    elif isinstance(expr, (ir.Tuple, ir.List)):
        for a in expr.items:
            _add_bound_names(a, out)
    elif isinstance(expr, ir.Attr):
        _add_bound_names(expr.obj, out)


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
