"""The source redraft emits reads like a careful person's code: for every function of the
catalogue and every transform, no emitted function holds a dead statement (an assignment
whose value is never read before it is reassigned or the function ends: an AST liveness
analysis, independent of the compiler's own), no call passes a bare True/False by
position (a flag is passed by keyword, or left to its default), and no `if` branches at run
time on a value's type (`vm.is_array(x)`, `isinstance`): each such choice is made when the
source is built."""
import ast

import pytest

import redraft
from redraft.compiler.transforms.common import TransformError

from catalogue import CATALOGUE

MODES = ("grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap")


def _functions():
    seen = {}
    for fn, _, options in CATALOGUE:
        if "xfail" not in options:
            seen.setdefault(fn.__name__, fn)
    return sorted(seen.items())


FUNCTIONS = _functions()


# ---- an AST liveness analysis ------------------------------------------------------------------

def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


class Liveness:
    """Backward liveness over one function body (loops to a fixed point, `break` and
    `continue` included). `dead` holds the assignments none of whose names is live after
    them, from the final pass."""

    def __init__(self):
        self.dead: dict[int, ast.Assign] = {}

    def block(self, stmts, live, after_loop, loop_head):
        for s in reversed(stmts):
            live = self.stmt(s, live, after_loop, loop_head)
        return live

    def stmt(self, s, live, after_loop, loop_head):
        if isinstance(s, ast.Assign):
            names = [n for t in s.targets for n in _names(t)]
            if names and not set(names) & live:
                self.dead[id(s)] = s
            else:
                self.dead.pop(id(s), None)
            return (live - set(names)) | _reads(s.value)
        if isinstance(s, ast.Return):
            return _reads(s.value) if s.value is not None else set()
        if isinstance(s, ast.Break):
            return set(after_loop)
        if isinstance(s, ast.Continue):
            return set(loop_head)
        if isinstance(s, ast.If):
            return (_reads(s.test) | self.block(s.body, live, after_loop, loop_head)
                    | self.block(s.orelse, live, after_loop, loop_head))
        if isinstance(s, ast.For):
            head, target = set(live), set(_names(s.target))
            while True:
                new = live | (self.block(s.body, head, live, head) - target)
                if new == head:
                    return head | _reads(s.iter)
                head = new
        if isinstance(s, ast.While):
            head = set(live) | _reads(s.test)
            while True:
                new = head | self.block(s.body, head, live, head)
                if new == head:
                    return head
                head = new
        return live | _reads(s)


def dead_statements(source: str) -> list[str]:
    out = []
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, ast.FunctionDef):
            live = Liveness()
            live.block(fn.body, set(), set(), set())
            out += [f"{fn.name}: {ast.unparse(s)}" for s in live.dead.values()]
    return out


def positional_flags(source: str) -> list[str]:
    return [ast.unparse(c) for c in ast.walk(ast.parse(source)) if isinstance(c, ast.Call)
            and any(isinstance(a, ast.Constant) and isinstance(a.value, bool) for a in c.args)]


def type_branches(source: str) -> list[str]:
    """The tests of `if` statements (and conditional expressions) that ask a value's type."""
    tests = [n.test for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.If, ast.IfExp))]
    return [ast.unparse(t) for t in tests
            if any(isinstance(c, ast.Call) and ast.unparse(c.func).split(".")[-1]
                   in ("is_array", "isinstance") for c in ast.walk(t))]


def test_liveness_finds_dead_statements_and_flags():
    source = ("def f(x, n):\n"
              "    a = x + 1\n"           # dead: reassigned before it is read
              "    a = x * 2\n"
              "    for i in range(n):\n"
              "        b = a * i\n"       # dead: never read
              "        c = a + i\n"       # live: read by the next iteration
              "        a = c\n"
              "    while True:\n"
              "        d = a > 1\n"
              "        if d:\n"
              "            break\n"
              "        e = g(a, False)\n"  # dead, and a positional flag
              "        a = a - 1\n"
              "    return a\n")
    assert sorted(dead_statements(source)) == ["f: a = x + 1", "f: b = a * i",
                                               "f: e = g(a, False)"]
    assert positional_flags(source) == ["g(a, False)"]


def test_the_check_finds_a_run_time_type_branch():
    source = ("def f(x):\n"
              "    x_is_array = vm.is_array(x)\n"
              "    if vm.is_array(x) & isinstance(x, list):\n"
              "        return x\n"
              "    return 0 if isinstance(x, int) else x\n")
    assert type_branches(source) == ["vm.is_array(x) & isinstance(x, list)",
                                     "isinstance(x, int)"]


# ---- every catalogue function, every transform ---------------------------------------------

def _emit(fn, mode):
    try:
        return redraft.emit(fn, mode)
    except (TransformError, TypeError) as e:
        return e


@pytest.mark.parametrize("mode", MODES)
def test_emitted_functions_have_no_dead_statement_and_no_positional_flag(mode):
    emitted, problems = 0, []
    for name, fn in FUNCTIONS:
        source = _emit(fn, mode)
        if isinstance(source, Exception):
            continue  # a transform that refuses the function says why elsewhere
        emitted += 1
        problems += [f"{name} ({mode}) dead: {d}" for d in dead_statements(source)]
        problems += [f"{name} ({mode}) flag: {c}" for c in positional_flags(source)]
        problems += [f"{name} ({mode}) run-time type branch: {t}"
                     for t in type_branches(source)]
    assert emitted >= 0.8 * len(FUNCTIONS), f"only {emitted} functions emitted in {mode}"
    assert not problems, "\n".join(problems)


def test_jacrev_source_is_one_batched_backward_pass_for_every_structure():
    """An array result and a tuple result alike take one batched backward pass over the
    standard basis of the output space: no loop, no run-time type branch."""
    import redraft.numpy as jnp

    def f(x):
        return jnp.tanh(x) * 2.0

    def pair(x):
        return x, x * 2.0

    for fn in (f, pair):
        source = redraft.emit(fn, "jacrev")
        assert not type_branches(source) and "is_array" not in source, source
        assert "for " not in source and "_bwd_batched" in source, source


def test_jacfwd_source_with_no_argument_at_hand_has_no_type_branch():
    """With no argument to read x's structure from, jacfwd is emitted for any x, an array
    or a pytree: one batched jvp over x's standard basis, no `vm.is_array` branch."""
    import numpy as np
    import redraft.numpy as jnp

    def f(x):
        return jnp.tanh(x) * 2.0

    source = redraft.emit(f, "jacfwd")
    assert not type_branches(source) and "is_array" not in source, source
    assert "for " not in source and "_jvp_batched" in source, source
    # the Core read with no argument at hand (an outer jacfwd transforms it) is right for
    # an array argument as for a pytree one
    x = jnp.asarray(np.array([0.3, -0.4, 0.5], np.float32))
    h = redraft.jacfwd(redraft.jacfwd(f))(x)
    t = np.tanh(np.asarray(x))
    np.testing.assert_allclose(np.asarray(h), np.einsum("ij,jk->ijk", np.eye(3),
                                                        np.diag(-4.0 * t * (1 - t * t))),
                               rtol=1e-5, atol=1e-6)


def test_batched_selu_aligns_only_where_ranks_may_differ():
    from catalogue import selu
    source = redraft.emit(selu, "vmap")
    assert source.count("vm.align") <= 4, source


def test_readme_example_is_real_output():
    import importlib.util
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location("quickstart", root / "examples/quickstart.py")
    quickstart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quickstart)
    readme = (root / "README.md").read_text()
    start = readme.index("def sum_logistic_grad(x):")
    shown = readme[start:readme.index("```", start)]
    emitted = redraft.emit(quickstart.sum_logistic, "grad")
    assert emitted[emitted.index("def sum_logistic_grad"):] == shown
