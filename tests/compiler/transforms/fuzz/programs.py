"""A hypothesis strategy for small programs in the Python redraft accepts, printed to source.

Every program is a module that defines `f(x, w)` (x: f[3], w: f[3,3]) returning a scalar,
and possibly helper functions it calls. Names are typed by shape kind (V: (3,), M: (3, 3),
S: ()), so every generated program is well formed; a name is read only where it is defined
on every path (names a block creates stay inside it unless every path through it assigns
them). Math is kept tame (tanh, sin, cos, exp of bounded values, halving) so float32 and
float64 agree closely.

`Features` switches constructs off: the in-suite run excludes the constructs that known-open
bugs hit (see test_fuzz.KNOWN_OPEN), `make fuzz` runs with everything on. The program text
is drawn from hypothesis choices, so hypothesis shrinks the text itself.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import pathlib
import tempfile

from hypothesis import strategies as st

V, M, S = "V", "M", "S"
SHAPE_IF_MARK = "# branches give y two shapes"
FRESH = ("a", "b", "c", "d", "h", "g", "p", "q", "r", "z")
# index arrays of 3 for a length-3 axis: repeated, negative and out-of-range entries (reads
# clamp, updates drop them), as JAX's rules have them
INDEX_ARRAYS = ("[2, 0, 1]", "[1, 1, 0]", "[0, -1, 2]", "[2, 2, 2]", "[0, 5, -4]")


@dataclasses.dataclass(frozen=True)
class Features:
    """Which constructs the generator may use (all on: the full strategy)."""
    full_fill: bool = True          # jnp.full(shape, traced value)
    broadcast_reduce: bool = True   # x[:, None] * y feeding a reduction
    loops: bool = True
    nested_loops: bool = True
    loop_in_branch: bool = True     # a loop inside an if/else branch
    while_loops: bool = True
    break_continue: bool = True
    array_if: bool = True           # if on an array value
    python_if: bool = True
    helpers: bool = True
    tuples: bool = True
    at_updates: bool = True
    rebind_params: bool = True      # x = ... / w = ... (shadowing a parameter)
    augassign: bool = True
    where: bool = True
    shape_if: bool = True           # an if on a value whose branches give a name two shapes
    loop_rebinds_outer: bool = True  # a loop body assigns a name defined before the loop
    # Python tuples/lists inside an if on a value or a loop: jnp.reshape(.., (9,)),
    # jnp.concatenate([..]), tuple assignment, x[:, None]
    containers_in_blocks: bool = True
    column_by_loop_index: bool = True  # m[:, i] with i a loop index
    block_local_names: bool = True  # names first bound inside a loop or an if on a value
    python_if_in_value_if: bool = True  # an if on a Python value inside an if on a value
    reuse_loop_index: bool = True   # two loops in one function with the same index name
    value_if_in_loop: bool = True   # an if on an array value inside a loop body
    value_if_in_value_if: bool = True  # an if on an array value inside another
    gathers: bool = True            # index arrays: x[idx], x.at[idx].add, sort, argsort


FULL = Features()


@dataclasses.dataclass
class Program:
    """A generated program: its source text (what hypothesis shrinks)."""
    text: str

    def __str__(self) -> str:
        return self.text


class _Env:
    """The names readable at a point, by kind, and the loop indices in scope (with bound)."""

    def __init__(self, names: dict[str, str], indices: dict[str, int],
                 frozen: frozenset = frozenset(), value_if: bool = False):
        self.names = dict(names)
        self.indices = dict(indices)
        self.frozen = frozen        # names defined before the innermost enclosing loop
        self.value_if = value_if    # inside a branch of an if on an array value

    def child(self, loop: bool = False, value_if: bool = False) -> "_Env":
        frozen = frozenset(self.names) if loop else self.frozen
        return _Env(self.names, self.indices, frozen, self.value_if or value_if)

    def assignable(self, kind: str, features: "Features") -> list[str]:
        """Existing names of `kind` a statement here may rebind."""
        return [n for n in self.of(kind)
                if (features.rebind_params or n not in ("x", "w"))
                and (features.loop_rebinds_outer or n not in self.frozen)]

    def of(self, kind: str) -> list[str]:
        return sorted(n for n, k in self.names.items() if k == kind)


class _Gen:
    """Draws one program; `draw` is hypothesis's."""

    def __init__(self, draw, features: Features):
        self.draw = draw
        self.ft = features
        self.helpers: list[tuple[str, str]] = []   # (name, return kind) callable from f
        self.kinds: dict[str, str] = {}   # one kind per name in a function, on all paths
        self.hoisted: dict[str, str] = {}  # names bound at the top (block_local_names off)

    # ---- small choices ------------------------------------------------------------------
    def choice(self, options):
        return self.draw(st.sampled_from(list(options)))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def index(self, env: _Env, loops: bool = True) -> str:
        """An index into a length-3 axis: a constant, or a loop index bounded by 3."""
        loop = [i for i, bound in env.indices.items() if bound <= 3 and loops]
        return self.choice(["0", "1", "2", "-1"] + loop)

    # ---- expressions --------------------------------------------------------------------
    def expr(self, kind: str, env: _Env, depth: int) -> str:
        names = env.of(kind)
        if depth <= 0 or (names and self.draw(st.integers(0, 3)) == 0):
            return self.leaf(kind, env)
        makers = {V: self.vec, M: self.mat, S: self.scal}[kind]
        return makers(env, depth - 1)

    def leaf(self, kind: str, env: _Env) -> str:
        names = env.of(kind)
        if names:
            return self.choice(names)
        vectors = env.of(V) or ["x"]
        return {V: vectors[0], M: (env.of(M) or ["w"])[0], S: f"jnp.sum({vectors[0]})"}[kind]

    def unary(self, inner: str) -> str:
        fn = self.choice(["jnp.tanh", "jnp.sin", "jnp.cos", "exp_sin"])
        return f"jnp.exp(jnp.sin({inner}))" if fn == "exp_sin" else f"{fn}({inner})"

    def vec(self, env: _Env, d: int) -> str:
        e = lambda k=V: self.expr(k, env, d)  # noqa: E731
        forms = ["unary", "half", "add", "sub", "mul", "square", "neg", "scal_bcast",
                 "matvec", "vecmat", "axis_sum", "axis_mean", "row", "col", "reverse",
                 "roll", "slice9"]
        if self.ft.at_updates:
            forms += ["at_set", "at_add", "at_mul"]
        if self.ft.where:
            forms.append("where")
        if self.ft.full_fill:
            forms.append("full")
        if self.ft.gathers:
            forms += ["gather", "gather2", "scatter_add", "sort", "by_order"]
        if self.ft.helpers:
            forms += ["helper"] * 2
        form = self.choice(forms)
        if form == "unary":
            return self.unary(e())
        if form == "half":
            return f"({e()} * 0.5)"
        if form in ("add", "sub", "mul"):
            op = {"add": "+", "sub": "-", "mul": "*"}[form]
            return f"({e()} {op} {e()})"
        if form == "square":
            return f"(jnp.tanh({e()}) ** 2)"
        if form == "neg":
            return f"(-{e()})"
        if form == "scal_bcast":
            return f"({e()} {self.choice(['+', '*'])} {e(S)})"
        if form == "matvec":
            return f"jnp.tanh({e(M)} @ {e()})"
        if form == "vecmat":
            return f"jnp.tanh({e()} @ {e(M)})"
        if form in ("axis_sum", "axis_mean"):
            fn = "sum" if form == "axis_sum" else "mean"
            return f"jnp.{fn}({e(M)}, axis={self.choice(['0', '1', '-1'])})"
        if form == "row":
            return f"{e(M)}[{self.index(env)}]"
        if form == "col":
            return f"{e(M)}[:, {self.index(env, self.ft.column_by_loop_index)}]"
        if form == "reverse":
            return f"{e()}[::-1]"
        if form == "roll":
            if (env.value_if or env.frozen) and not self.ft.containers_in_blocks:
                return f"{e()}[::-1]"
            return f"jnp.concatenate([{e()}[1:], {e()}[:1]])"
        if form == "slice9":
            if (env.value_if or env.frozen) and not self.ft.containers_in_blocks:
                return f"{e(M)}[{self.index(env)}]"
            start = self.choice(["0", "3", "6"])
            return f"jnp.reshape({e(M)}, (9,))[{start}:{int(start) + 3}]"
        if form in ("at_set", "at_add", "at_mul"):
            op = form[3:]
            arg = "0.5" if op == "mul" else e(S)
            name = {"set": "set", "add": "add", "mul": "multiply"}[op]
            return f"{e()}.at[{self.index(env)}].{name}({arg})"
        if form == "where":
            a = e()
            return f"jnp.where({a} > 0.0, {a}, ({e()} * 0.5))"
        if form == "full":
            return f"jnp.full((3,), {e(S)})"
        if form == "gather":
            return f"{e()}[jnp.array({self.choice(INDEX_ARRAYS)})]"
        if form == "gather2":
            rows, cols = self.choice(INDEX_ARRAYS), self.choice(INDEX_ARRAYS)
            return f"{e(M)}[jnp.array({rows}), jnp.array({cols})]"
        if form == "scatter_add":
            return f"{e()}.at[jnp.array({self.choice(INDEX_ARRAYS)})].add({e()})"
        if form == "sort":
            return f"jnp.sort({e()})"
        if form == "by_order":
            return f"{e()}[jnp.argsort({e()})]"
        return self.call_helper(V, env, d) or self.unary(e())

    def mat(self, env: _Env, d: int) -> str:
        e = lambda k=M: self.expr(k, env, d)  # noqa: E731
        forms = ["unary", "half", "add", "mul", "matmul", "transpose", "reshape", "outer",
                 "row_bcast"]
        if self.ft.broadcast_reduce and (self.ft.containers_in_blocks
                                         or not (env.value_if or env.frozen)):
            forms.append("bcast")
        if self.ft.at_updates:
            forms.append("at_row")
        if self.ft.gathers:
            forms += ["row_gather", "col_order"]
        form = self.choice(forms)
        if form == "unary":
            return self.unary(e())
        if form == "half":
            return f"({e()} * 0.5)"
        if form == "add":
            return f"({e()} + {e()})"
        if form == "mul":
            return f"({e()} * {e()})"
        if form == "matmul":
            return f"jnp.tanh({e()} @ {e()})"
        if form == "transpose":
            return f"{e()}.T"
        if form == "reshape":
            if (env.value_if or env.frozen) and not self.ft.containers_in_blocks:
                return f"{e()}.T"
            return f"jnp.reshape(jnp.reshape({e()}, (9,)), (3, 3))"
        if form == "outer":
            return f"jnp.outer({e(V)}, {e(V)})"
        if form == "row_bcast":
            return f"({e()} + {e(V)})"
        if form == "bcast":
            return f"({e(V)}[:, None] * {e(V)})"
        if form == "row_gather":
            return f"{e()}[jnp.array({self.choice(INDEX_ARRAYS)})]"
        if form == "col_order":
            return f"{e()}[:, jnp.argsort({e(V)})]"
        return f"{e()}.at[{self.index(env)}].set({e(V)})"

    def scal(self, env: _Env, d: int) -> str:
        e = lambda k=S: self.expr(k, env, d)  # noqa: E731
        forms = ["sum", "mean", "item", "dot", "unary", "half", "add", "mul", "sum_sq"]
        if self.ft.broadcast_reduce and (self.ft.containers_in_blocks
                                         or not (env.value_if or env.frozen)):
            forms.append("bcast_sum")
        if self.ft.helpers:
            forms.append("helper")
        form = self.choice(forms)
        if form == "sum":
            return f"jnp.sum({e(V)})"
        if form == "mean":
            return f"jnp.mean({e(M)})"
        if form == "item":
            return f"{e(V)}[{self.index(env)}]"
        if form == "dot":
            return f"jnp.tanh({e(V)} @ {e(V)})"
        if form == "unary":
            return self.unary(e())
        if form == "half":
            return f"({e()} * 0.5)"
        if form == "add":
            return f"({e()} + {e()})"
        if form == "mul":
            return f"({e()} * {e()})"
        if form == "sum_sq":
            return f"jnp.mean({e(M)} ** 2)"
        if form == "bcast_sum":
            return f"jnp.mean(jnp.tanh({e(V)}[:, None] * {e(V)}))"
        return self.call_helper(S, env, d) or f"jnp.sum({e(V)})"

    def call_helper(self, kind: str, env: _Env, d: int) -> str | None:
        usable = [name for name, k in self.helpers if k == kind]
        if not usable:
            return None
        return f"{self.choice(usable)}({self.expr(V, env, d)}, {self.expr(M, env, d)})"

    # ---- statements ---------------------------------------------------------------------
    def target(self, kind: str, env: _Env) -> str:
        """A name to assign: often one that exists (rebinding, shadowing), or a fresh one."""
        existing = env.assignable(kind, self.ft)
        taken = set(env.names) | set(env.indices)
        fresh = [n for n in FRESH if n not in taken and self.kinds.get(n, kind) == kind]
        if existing and (not fresh or self.flag()):
            return self.choice(existing)
        if fresh:
            name = self.choice(fresh)
            self.kinds[name] = kind
            if (env.frozen or env.value_if) and not self.ft.block_local_names:
                self.hoisted.setdefault(name, kind)
            return name
        if existing:
            return self.choice(existing)
        name = f"{kind.lower()}{len(self.kinds)}"
        self.kinds[name] = kind
        return name

    def block(self, env: _Env, depth: int, n_max: int, in_loop: str | None,
              loops_ok: bool = True) -> tuple[list[str], set[str]]:
        """1..n_max statements; returns (lines, names assigned on every path through)."""
        n = self.draw(st.integers(1, n_max))
        lines: list[str] = []
        assigned: set[str] = set()
        jumped = False
        for _ in range(n):
            stmt, done, jumps = self.stmt(env, depth, in_loop, loops_ok)
            lines += stmt
            if not jumped:
                assigned |= done
            jumped = jumped or jumps
        return lines, assigned

    def stmt(self, env: _Env, depth: int, in_loop: str | None,
             loops_ok: bool) -> tuple[list[str], set[str], bool]:
        """(lines, names surely assigned, whether it may break/continue)."""
        kinds = ["assign"] * 4
        if self.ft.augassign:
            kinds.append("aug")
        if self.ft.tuples and (self.ft.containers_in_blocks or not (env.value_if or env.frozen)):
            kinds.append("tuple")
        if depth > 0:
            if self.ft.loops and loops_ok:
                kinds += ["for"] * 2
                if self.ft.while_loops:
                    kinds.append("while")
            if self.ft.array_if and (self.ft.value_if_in_loop or not env.frozen) \
                    and (self.ft.value_if_in_value_if or not env.value_if):
                kinds.append("array_if")
            if self.ft.python_if and (self.ft.python_if_in_value_if or not env.value_if):
                kinds.append("python_if")
            if self.ft.shape_if and self.ft.array_if:
                kinds.append("shape_if")
            if in_loop and self.ft.break_continue:
                kinds.append("jump")
        kind = self.choice(kinds)
        return getattr(self, f"stmt_{kind}")(env, depth, in_loop, loops_ok)

    def stmt_assign(self, env, depth, in_loop, loops_ok):
        kind = self.choice([V, V, M, S])
        value = self.expr(kind, env, 2)
        name = self.target(kind, env)
        env.names[name] = kind
        return [f"{name} = {value}"], {name}, False

    def stmt_aug(self, env, depth, in_loop, loops_ok):
        kind = self.choice([V, M, S])
        names = env.assignable(kind, self.ft)
        if not names:
            return self.stmt_assign(env, depth, in_loop, loops_ok)
        name = self.choice(names)
        op = self.choice(["+=", "-=", "*="])
        value = "0.5" if op == "*=" else self.expr(kind, env, 1)
        if op != "*=" and self.flag():
            value = self.expr(S, env, 1)
        return [f"{name} {op} {value}"], {name}, False

    def stmt_tuple(self, env, depth, in_loop, loops_ok):
        k1, k2 = self.choice([V, M, S]), self.choice([V, S])
        form = self.choice(["pair", "swap", "helper"])
        if form == "swap" and len(env.assignable(k1, self.ft)) >= 2:
            a, b = self.draw(st.permutations(env.assignable(k1, self.ft)))[:2]
            return [f"{a}, {b} = {b}, {a}"], {a, b}, False
        if form == "helper" and self.ft.helpers and any(k == "T" for _, k in self.helpers):
            fn = self.choice([n for n, k in self.helpers if k == "T"])
            call = f"{fn}({self.expr(V, env, 1)}, {self.expr(M, env, 1)})"
            a = self.target(V, env)
            env.names[a] = V
            b = self.target(S, env)
            env.names[b] = S
            if a == b:
                return [f"{a} = {call}[1]"], {a}, False
            return [f"{a}, {b} = {call}"], {a, b}, False
        v1, v2 = self.expr(k1, env, 1), self.expr(k2, env, 1)
        a = self.target(k1, env)
        env.names[a] = k1
        b = self.target(k2, env)
        if a == b:
            return [f"{a} = {v1}"], {a}, False
        env.names[b] = k2
        if self.flag():
            t = "pair"
            return [f"{t} = ({v1}, {v2})", f"{a}, {b} = {t}"], {a, b}, False
        return [f"{a}, {b} = {v1}, {v2}"], {a, b}, False

    def stmt_for(self, env, depth, in_loop, loops_ok):
        names = [i for i in ("i", "j", "k") if i not in env.indices
                 and (self.ft.reuse_loop_index or i not in self.kinds)]
        index = self.choice(names or [f"i{len(self.kinds)}"])
        self.kinds[index] = "index"
        bound = self.choice(["1", "2", "3", "STEPS"])
        inner = env.child(loop=True)
        inner.indices[index] = 2 if bound == "STEPS" else int(bound)
        nested_ok = self.ft.nested_loops
        body, assigned = self.block(inner, depth - 1, 3, index, nested_ok)
        self._carry(env, inner, set())
        return [f"for {index} in range({bound}):"] + _indent(body), set(), False

    def stmt_while(self, env, depth, in_loop, loops_ok):
        taken = set(env.names) | set(env.indices)
        counter = self.choice([n for n in ("n", "t", "u") if n not in taken] or ["n"])
        bound = self.choice(["1", "2", "3"])
        inner = env.child(loop=True)
        inner.indices[counter] = int(bound)
        body, _ = self.block(inner, depth - 1, 3, None, self.ft.nested_loops)
        head = []
        if self.ft.break_continue and self.flag():
            head = [f"if {counter} == {self.choice(['0', '1'])}:", "    break"]
        self._carry(env, inner, set())
        lines = [f"{counter} = 0", f"while {counter} < {bound}:"]
        lines += _indent(head + body + [f"{counter} += 1"])
        return lines, set(), False

    def stmt_array_if(self, env, depth, in_loop, loops_ok):
        cond = self.choice(["sum", "item", "scal"])
        if cond == "sum":
            test = f"jnp.sum({self.expr(V, env, 1)}) > 0.0"
        elif cond == "item":
            test = f"{self.expr(V, env, 1)}[{self.index(env)}] > 0.1"
        else:
            test = f"{self.expr(S, env, 1)} > -0.2"
        return self._if(test, env, depth, in_loop, loops_ok, on_value=True)

    def stmt_python_if(self, env, depth, in_loop, loops_ok):
        if env.indices:
            i = self.choice(sorted(env.indices))
            test = self.choice([f"{i} == 1", f"{i} % 2 == 0", f"{i} > 0"])
        else:
            test = self.choice(["STEPS > 1", "STEPS == 3", "SCALE < 1.0"])
        return self._if(test, env, depth, in_loop, loops_ok)

    def stmt_shape_if(self, env, depth, in_loop, loops_ok):
        """`y` is (3,) on one path and (2,) on the other; only its sum is read after. jit
        and vmap may refuse this (one shape per value), but must not compute a wrong
        number (SHAPE_IF_MARK tells the properties)."""
        test = f"jnp.sum({self.expr(V, env, 1)}) > 0.0"
        y = f"y{len(self.kinds)}"
        self.kinds[y] = "shape"
        long, short = self.expr(V, env, 1), self.expr(V, env, 1)
        target = self.target(S, env)
        env.names[target] = S
        lines = [f"if {test}:  {SHAPE_IF_MARK}", f"    {y} = {long}", "else:",
                 f"    {y} = {short}[:{self.choice(['1', '2'])}]", f"{target} = jnp.sum({y})"]
        return lines, {target}, False

    def _if(self, test, env, depth, in_loop, loops_ok, on_value=False):
        loops_here = loops_ok and (self.ft.loop_in_branch or not on_value)
        then_env = env.child(value_if=on_value)
        then_lines, then_done = self.block(then_env, depth - 1, 2, in_loop, loops_here)
        lines = [f"if {test}:"] + _indent(then_lines)
        if self.flag():
            else_env = env.child(value_if=on_value)
            else_lines, else_done = self.block(else_env, depth - 1, 2, in_loop, loops_here)
            lines += ["else:"] + _indent(else_lines)
            both = {n for n in then_done & else_done
                    if then_env.names.get(n) == else_env.names.get(n)}
            self._carry(env, then_env, both)
            self._carry(env, else_env, both)
            jumps = any(line.strip() in ("break", "continue") for line in lines)
            return lines, both, jumps
        self._carry(env, then_env, set())
        jumps = any(line.strip() in ("break", "continue") for line in lines)
        return lines, set(), jumps

    def _carry(self, env: _Env, inner: _Env, new_ok: set[str]) -> None:
        """Names a block rebinds keep their kind outside; names it creates stay inside
        unless every path assigns them (new_ok)."""
        for name in new_ok:
            env.names[name] = inner.names[name]

    def stmt_jump(self, env, depth, in_loop, loops_ok):
        test = self.choice([f"{in_loop} == 1", f"{in_loop} == 0", f"{in_loop} > 0"])
        if self.flag() and self.ft.array_if:
            test = f"jnp.sum({self.expr(V, env, 1)}) > 0.5"
        word = self.choice(["break", "continue"])
        return [f"if {test}:", f"    {word}"], set(), True

    # ---- functions ----------------------------------------------------------------------
    def helper(self, name: str) -> list[str]:
        ret = self.choice([V, S, "T"])
        env = _Env({"a": V, "m": M}, {})
        self.kinds = {"a": V, "m": M}
        self.hoisted = {}
        body, _ = self.block(env, 1, 3, None, self.ft.loops)
        body = self.hoist("a", "m") + body
        if ret == "T":
            out = f"return {self.expr(V, env, 1)}, {self.expr(S, env, 1)}"
        else:
            out = f"return {self.expr(ret, env, 2)}"
        self.helpers.append((name, ret))
        self.kinds = {}
        return [f"def {name}(a, m):"] + _indent(body + [out]) + ["", ""]

    def program(self) -> Program:
        lines = ["import redraft.numpy as jnp", "", "STEPS = 2", "SCALE = 0.5", "", ""]
        if self.ft.helpers:
            for k in range(self.draw(st.integers(0, 2))):
                lines += self.helper(f"g{k}")
        env = _Env({"x": V, "w": M}, {})
        self.kinds = {"x": V, "w": M}
        self.hoisted = {}
        body, _ = self.block(env, 2, 5, None, True)
        body = self.hoist("x", "w") + body
        lines += ["def f(x, w):"] + _indent(body + [self.result(env)])
        return Program("\n".join(lines) + "\n")

    def hoist(self, vec: str, mat: str) -> list[str]:
        """Zero bindings at the top for the names blocks create (block_local_names off), so
        each is defined on every path."""
        zero = {V: f"{vec} * 0.0", M: f"{mat} * 0.0", S: f"jnp.sum({vec}) * 0.0"}
        return [f"{name} = {zero[kind]}" for name, kind in self.hoisted.items()]

    def result(self, env: _Env) -> str:
        """The scalar f returns: a sum over a few live names, so they all matter."""
        terms = []
        names = sorted(env.names)
        picked = self.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3,
                                    unique=True))
        for name in picked:
            kind = env.names[name]
            if kind == V:
                terms.append(self.choice([f"jnp.sum({name})", f"jnp.sum({name} ** 2)",
                                          f"jnp.sum(jnp.sin({name}))"]))
            elif kind == M:
                terms.append(self.choice([f"jnp.mean({name})", f"jnp.sum(jnp.tanh({name}))"]))
            else:
                terms.append(name)
        return "return " + " + ".join(terms)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def programs(features: Features = FULL) -> st.SearchStrategy[Program]:
    """The strategy: one Program per example."""
    @st.composite
    def build(draw):
        return _Gen(draw, features).program()
    return build()


_DIR = pathlib.Path(tempfile.mkdtemp(prefix="redraft-fuzz-"))
_SERIAL = itertools.count()


def load(text: str, name: str | None = None):
    """Write `text` to a new .py file (redraft reads source with inspect) and import it."""
    name = name or f"fuzzprog_{next(_SERIAL)}"
    path = _DIR / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
