"""The package's modules import one way: no import cycle of more than two modules.

Every module of the four package roots (setup.py maps compiler/, runtime/ and kernels/ to
redraft.compiler, redraft.runtime and redraft.kernels) is parsed with `ast`; every import
counts, those inside functions too, with relative imports resolved and `compiler.x` read as
`redraft.compiler.x`. `from package import name` is an edge to the submodule where `name`
is one, else to the package. The strongly connected components of that graph are the
cycles; a pair (a module and its printer) is allowed, anything larger fails with the cycle.

The layer order the graph should follow is drawn in docs/ARCHITECTURE.md.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = {
    "redraft": "redraft",
    "redraft.compiler": "compiler",
    "redraft.runtime": "runtime",
    "redraft.kernels": "kernels",
}
ALLOWED_CYCLE = 2


def package_modules() -> dict[str, tuple[Path, bool]]:
    """Maps each dotted module name to its file and whether it is a package __init__."""
    modules = {}
    for package, folder in ROOTS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            modules[".".join([package, *parts])] = (path, is_package)
    return modules


def canonical(name: str) -> str:
    """`compiler.x` is the same module as `redraft.compiler.x` (setup.py's mapping)."""
    for short in ("compiler", "runtime", "kernels"):
        if name == short or name.startswith(short + "."):
            return "redraft." + name
    return name


def imported_modules(module: str, path: Path, is_package: bool, modules) -> set[str]:
    """The package modules `module` imports, at top level or inside functions.

    `from pkg import name` reaches pkg.name where that is a module, else pkg itself."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {canonical(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = canonical(node.module)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                names.add(submodule if submodule in modules else source)
    return {name for name in names if name in modules and name != module}


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports."""
    modules = package_modules()
    return {module: imported_modules(module, path, is_package, modules)
            for module, (path, is_package) in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph is deep enough to hit the recursion limit)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete import path around the component: a -> b -> ... -> a."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    return paths[node] + [start]
                if succ not in paths:
                    paths[succ] = paths[node] + [succ]
                    nxt.append(succ)
        frontier = nxt
    return component


def test_graph_covers_the_package():
    graph = import_graph()
    assert "redraft.compiler.driver" in graph
    assert "redraft.runtime.array" in graph["redraft.runtime.transfer"]


def test_no_import_cycle_longer_than_two():
    graph = import_graph()
    cycles = [c for c in strongly_connected(graph) if len(c) > ALLOWED_CYCLE]
    cycles.sort(key=len, reverse=True)
    report = "\n".join(f"{len(c)} modules: " + " -> ".join(a_cycle(graph, c))
                       for c in cycles)
    assert not cycles, f"import cycles of more than {ALLOWED_CYCLE} modules:\n{report}"
