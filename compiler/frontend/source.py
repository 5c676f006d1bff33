"""Find a function's source and parse it with gast: defs, nested defs, methods, lambdas
(several on one line, told apart by code positions), and REPL/notebook cells via linecache."""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import re
import textwrap
import threading
from dataclasses import dataclass

import gast

from redraft.runtime.errors import RedraftError


class SourceUnavailableError(RedraftError):
    """The function's source text cannot be found (built-in, exec'd string, C extension)."""


_PARSE_LOCK = threading.Lock()


# libraries whose functions transformed and staged code calls as they are (NumPy's reductions
# dispatch to an Array's methods), never reading their source
OPAQUE_LIBRARIES = frozenset({"numpy", "scipy", "math", "builtins", "functools", "operator"})


def _parse(text: str) -> gast.AST:
    """gast.parse, one thread at a time: CPython 3.11's parser fails with "AST constructor
    recursion depth mismatch" when threads parse at once (pmap transforms on each device's
    thread)."""
    with _PARSE_LOCK:
        return gast.parse(text)


@dataclass
class ParsedFunction:
    node: gast.AST  # a gast.FunctionDef or gast.Lambda
    filename: str
    line_offset: int  # add to node line numbers to get file line numbers


def parse_function(fn) -> ParsedFunction:
    """The gast node of `fn`'s definition, with file and line information."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise SourceUnavailableError(f"{fn!r} is not a Python function, so redraft cannot "
                                     "read its source")
    filename = code.co_filename
    if code.co_name == "<lambda>":
        return _parse_lambda(fn, filename)
    try:
        # the source of the code object that runs: inspect.getsourcelines(fn) would follow
        # a functools.wraps wrapper's __wrapped__ to the function it wraps
        lines, start = inspect.getsourcelines(code)
    except (OSError, TypeError) as e:
        raise SourceUnavailableError(
            f"cannot read the source of {fn.__qualname__} ({filename}): {e}. Define it in a "
            "file, or in a notebook/REPL that keeps its cells (IPython does)") from None
    text = textwrap.dedent("".join(lines))
    tree = _parse(text)
    node = tree.body[0]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise SourceUnavailableError(f"the source of {fn.__qualname__} is not a def")
    return ParsedFunction(node, filename, max(start, 1) - 1)


def _parse_lambda(fn, filename: str) -> ParsedFunction:
    """Pick, among the lambdas starting on fn's first line, the one whose body is fn's."""
    code = fn.__code__
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise SourceUnavailableError(f"cannot read the source of a lambda in {filename}")
    line = code.co_firstlineno
    candidates = list(_parse_enclosing(lines, line).lambdas_by_line().get(line, ()))
    if not candidates:
        raise SourceUnavailableError(f"no lambda found at {filename}:{line}")
    if len(candidates) > 1:
        candidates = _match_by_position(candidates, code) or candidates
        if len(candidates) > 1:
            candidates = _match_by_signature(candidates, code)
    return ParsedFunction(candidates[0], filename, 0)


class _ParsedText:
    """A parsed file (or the statement around a line), with the index of its lambdas by
    first line, built on first use and living as long as the parse: walking a rule file
    for each of its lambdas took half of the MLP update's first compile."""

    def __init__(self, tree: gast.AST):
        self.tree = tree
        self._lambdas: dict[int, list] | None = None

    def lambdas_by_line(self) -> dict[int, list]:
        if self._lambdas is None:
            index: dict[int, list] = {}
            for n in gast.walk(self.tree):
                if isinstance(n, gast.Lambda):
                    index.setdefault(n.lineno, []).append(n)
            self._lambdas = index
        return self._lambdas


@functools.lru_cache(maxsize=64)
def _parse_text(text: str) -> _ParsedText:
    """A whole file parsed once (where a lambda's statement does not parse alone)."""
    return _ParsedText(_parse(text))


def _parse_enclosing(lines: list[str], line: int) -> _ParsedText:
    """The smallest statement of the file around `line`, parsed with gast, its line numbers
    and columns those of the file (the whole file where that statement does not parse
    alone); around `line` if the file does not parse (a partial notebook cell)."""
    found = _parse_in_top_level_statement(lines, line)
    if found is not None:
        return found
    text = "".join(lines)
    try:
        span = _statement_around(_python_ast(text), line)
    except SyntaxError:
        return _parse_around(lines, line)
    if span is not None:
        try:
            return _parse_lines("".join(lines[span[0] - 1:span[1]]), span[0])
        except SyntaxError:  # a one-line block after `else:` and the like
            pass
    return _parse_text(text)


def _parse_in_top_level_statement(lines: list[str], line: int) -> _ParsedText | None:
    """`_parse_enclosing` without parsing the whole file (Python's parser took 7 ms for a
    30 kB rule file, a tenth of a first call): the top-level statements around `line` are
    told by the lines that start at column 0, and only they are parsed. None where that
    cannot be relied on (a triple-quoted string or a backslash continuation near the line,
    text that does not parse): the caller parses the whole file."""
    span = _top_level_span(lines, line)
    if span is None:
        return None
    first, last = span
    try:
        with _PARSE_LOCK:
            tree = ast.parse("".join(lines[first - 1:last]))
    except SyntaxError:
        return None
    inner = _statement_around(tree, line - first + 1)
    if inner is None:
        return None
    try:
        return _parse_lines("".join(lines[inner[0] + first - 2:inner[1] + first - 1]),
                            inner[0] + first - 1)
    except SyntaxError:
        return None


# a column-0 line that goes on the compound statement above it
_CONTINUES_BLOCK = re.compile(r"(else|elif|except|finally)\b")


def _top_level_span(lines: list[str], line: int) -> tuple[int, int] | None:
    """(first, last line) of the top-level statements holding `line`: from the nearest line
    at or above it that starts a statement at column 0 to the line before the next one.
    With no triple quote and no backslash continuation in or just before those lines, a
    column-0 line cannot lie inside a string, and one inside brackets leaves the chunk
    unbalanced, so that its parse fails; the caller parses the whole file then."""
    def starts_statement(k: int) -> bool:  # k: a line number
        text = lines[k - 1]
        return (text[:1] not in ("", " ", "\t", "\n", "\r", "\f", "#", ")", "]", "}")
                and not _CONTINUES_BLOCK.match(text))

    if not 0 < line <= len(lines):
        return None
    first = line
    while first > 1 and not starts_statement(first):
        first -= 1
    last = line
    while last < len(lines) and not starts_statement(last + 1):
        last += 1
    if not starts_statement(first) or (first > 1 and lines[first - 2].rstrip("\r\n")
                                       .endswith("\\")):
        return None
    if any('"""' in text or "'''" in text for text in lines[first - 1:last]):
        return None
    return first, last


@functools.lru_cache(maxsize=64)
def _python_ast(text: str):
    """A file parsed by Python's own parser (in C: a rule file takes ~1 ms; gast's
    conversion of its tree to gast took 20-70 ms, for the one statement a lambda is in);
    one thread at a time, as `_parse`."""
    with _PARSE_LOCK:
        return ast.parse(text)


def _statement_around(tree, line: int) -> tuple[int, int] | None:
    """(first, last line) of the innermost statement of `tree` whose lines hold `line`."""
    found, nodes = None, list(tree.body)
    while nodes:
        node = nodes.pop(0)
        if not (getattr(node, "lineno", line) <= line <= getattr(node, "end_lineno", line)):
            continue
        if isinstance(node, ast.stmt):
            found = node
        elif not isinstance(node, (ast.excepthandler, ast.match_case)):
            continue
        nodes = list(ast.iter_child_nodes(node))
    return None if found is None else (found.lineno, found.end_lineno)


@functools.lru_cache(maxsize=256)
def _parse_lines(chunk: str, start: int) -> _ParsedText:
    """`chunk`, the file's lines from `start`, parsed where they stand: an indented chunk
    goes under `if 1:` so its columns stay the file's; line numbers are made the file's."""
    indented = chunk[:1].isspace()
    tree = _parse("if 1:\n" + chunk if indented else chunk)
    shift = start - 2 if indented else start - 1
    for n in gast.walk(tree):
        if hasattr(n, "lineno"):
            n.lineno += shift
            if getattr(n, "end_lineno", None) is not None:
                n.end_lineno += shift
    return _ParsedText(tree)


def _parse_around(lines: list[str], line: int) -> _ParsedText:
    """The first lines from `line` that parse (dedented), for a file that does not."""
    start = line - 1
    for end in range(line, len(lines) + 1):
        chunk = textwrap.dedent("".join(lines[start:end]))
        try:
            tree = _parse(chunk)
        except SyntaxError:
            continue
        for n in gast.walk(tree):
            if hasattr(n, "lineno"):
                n.lineno += start
        return _ParsedText(tree)
    raise SourceUnavailableError(f"cannot parse the code around line {line}")


def _match_by_position(candidates, code):
    """Lambdas on one line differ in columns: compare with the code object's positions."""
    positions = [p for p in getattr(code, "co_positions", lambda: [])()
                 if p[2] is not None and p[3] is not None and p[3] > p[2]
                 and p[0] == code.co_firstlineno]  # (line, line, 0, 0) marks RESUME
    if not positions:
        return None
    lo = min(p[2] for p in positions)
    hi = max(p[3] for p in positions if p[3] is not None)
    inside = [n for n in candidates if n.body.col_offset <= lo and hi <= n.body.end_col_offset
              and n.body.lineno == code.co_firstlineno]
    inside.sort(key=lambda n: n.body.end_col_offset - n.body.col_offset)
    return inside[:1] or None


def _match_by_signature(candidates, code):
    names = code.co_varnames[:code.co_argcount]
    same = [n for n in candidates if tuple(a.id for a in list(
        getattr(n.args, "posonlyargs", [])) + list(n.args.args)) == names]
    return same or candidates
