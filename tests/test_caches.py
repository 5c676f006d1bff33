"""No module-level table is keyed by `id()`: an id is reused once its object is freed, so
such a table can hand a later object a freed one's entry (each had its own trick to keep
the object alive). Tables keyed by a callable use compiler/transforms/cache.py
(IdentityTable, TRANSFORM_CACHE); an index over a parsed tree lives on the parse.

Every module of the package is parsed with `ast`; a subscript, `.get`, `.setdefault` or
`.pop` keyed by `id(...)` on a name the module binds at its top level fails the test
(tables on an instance or local to one pass are fine)."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("compiler", "redraft", "runtime", "kernels")


def _is_id_call(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "id")


def _module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def id_keyed_tables(source: str) -> list[str]:
    """`NAME[id(x)]` and `NAME.get(id(x))`-style uses where NAME is a module-level name."""
    tree = ast.parse(source)
    tables = _module_names(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id in tables and _is_id_call(node.slice)):
            found.append(ast.unparse(node))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id in tables
              and node.func.attr in ("get", "setdefault", "pop") and node.args
              and _is_id_call(node.args[0])):
            found.append(ast.unparse(node))
    return found


def test_the_check_finds_an_id_keyed_table():
    source = "CACHE = {}\ndef f(t):\n    CACHE[id(t)] = t\n    return CACHE.get(id(t))\n"
    assert id_keyed_tables(source) == ["CACHE[id(t)]", "CACHE.get(id(t))"]
    assert id_keyed_tables("def f(t):\n    seen = {}\n    seen[id(t)] = t\n") == []


def test_no_module_level_table_is_keyed_by_id():
    found = []
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            found += [f"{path.relative_to(REPO)}: {use}"
                      for use in id_keyed_tables(path.read_text())]
    assert not found, "\n".join(found)
