"""Finding a lambda's source: only the statement around it is parsed with gast (a rule file's
lambdas were each found by converting the whole file), with the file's lines and columns."""
import importlib.util
import textwrap

import gast

from redraft.compiler.frontend import source

MODULE = textwrap.dedent('''\
    def table():
        pair = (lambda x: x + 1, lambda x, y: x * y)
        return pair


    RULE = dict(
        tangent=lambda g, ans, x:
            g * (1 - ans * ans),
    )

    if True: ONE_LINE = lambda z: z - 3
    else: ELSE_LINE = lambda z: z + 3

    NESTED = lambda a: (lambda b: a + b)
    ''')


def _module(tmp_path):
    path = tmp_path / "rules_for_test.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("rules_for_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(parsed) -> str:
    return gast.unparse(parsed.node).strip()


def test_lambdas_are_found_by_their_statement_with_file_positions(tmp_path):
    m = _module(tmp_path)
    before = source._parse_text.cache_info().currsize
    first, second = m.table()
    p1, p2 = source.parse_function(first), source.parse_function(second)
    assert _text(p1) == "lambda x: x + 1" and _text(p2) == "lambda x, y: x * y"
    assert p1.node.lineno == p2.node.lineno == 2
    assert p1.node.col_offset == MODULE.splitlines()[1].index("lambda x:")
    rule = source.parse_function(m.RULE["tangent"])
    assert _text(rule) == "lambda g, ans, x: g * (1 - ans * ans)"
    assert (rule.node.lineno, rule.node.body.lineno) == (7, 8)
    assert _text(source.parse_function(m.ONE_LINE)) == "lambda z: z - 3"
    inner = m.NESTED(1)
    assert _text(source.parse_function(inner)) == "lambda b: a + b"
    assert source._parse_text.cache_info().currsize == before  # no whole-file gast parse


def test_a_statement_that_does_not_parse_alone_falls_back_to_the_whole_file(tmp_path):
    m = _module(tmp_path)
    # `else: ELSE_LINE = ...` never runs: its lambda made from the module's code object
    code = next(c for c in compile(MODULE, str(tmp_path / "rules_for_test.py"),
                                   "exec").co_consts
                if hasattr(c, "co_name") and c.co_name == "<lambda>"
                and c.co_firstlineno == 12)
    fn = type(m.ONE_LINE)(code, vars(m))
    assert _text(source.parse_function(fn)) == "lambda z: z + 3"


def _whole_file_lambdas(lines: list[str], line: int) -> list[str]:
    """The lambdas at `line` as the whole-file route finds them (gast dumps, positions
    included)."""
    span = source._statement_around(source._python_ast("".join(lines)), line)
    parsed = source._parse_lines("".join(lines[span[0] - 1:span[1]]), span[0])
    return [gast.dump(n, include_attributes=True)
            for n in parsed.lambdas_by_line().get(line, ())]


def test_the_top_level_statement_route_finds_the_lambdas_the_whole_file_does():
    """Every lambda of redraft's own files (its rules are lambdas) found from the column-0
    lines around it is the node, positions and all, that parsing the whole file gives."""
    import ast
    import pathlib
    root = pathlib.Path(source.__file__).resolve().parents[2]
    checked = 0
    for path in sorted(root.glob("compiler/**/*.py")) + sorted(root.glob("redraft/**/*.py")):
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        for line in sorted({n.lineno for n in ast.walk(ast.parse(text))
                            if isinstance(n, ast.Lambda)}):
            fast = source._parse_in_top_level_statement(lines, line)
            if fast is None:
                continue
            found = [gast.dump(n, include_attributes=True)
                     for n in fast.lambdas_by_line().get(line, ())]
            assert found == _whole_file_lambdas(lines, line), f"{path}:{line}"
            checked += 1
    assert checked > 300


TRICKY = textwrap.dedent('''\
    CALL = dict(a=1,
    b=(lambda x: x * 2),
    c=3)
    D = (lambda y: y - 1,
    """
    X = 1
    """)
    E = lambda z: z + \\
    1
    if False:
        pass
    else:
        F = lambda w: w / 2
    elsewhere = lambda v: v ** 2
    ''')


def test_column_0_lines_inside_brackets_strings_or_continuations_are_no_statements():
    lines = TRICKY.splitlines(keepends=True)
    # `b=(lambda ...),` alone parses (as a tuple assignment), with the same lambda
    assert source._parse_in_top_level_statement(lines, 4) is None  # cut before a string
    assert source._top_level_span(lines, 5) is None  # a triple-quoted string in it
    assert source._parse_in_top_level_statement(lines, 8) is None  # ends in a backslash
    assert source._top_level_span(lines, 13) == (10, 13)  # `else:` goes on the `if`
    assert source._top_level_span(lines, 14) == (14, 14)  # `elsewhere` starts one
    for line in (2, 4, 8, 13, 14):
        assert [gast.dump(n, include_attributes=True) for n in
                source._parse_enclosing(lines, line).lambdas_by_line()[line]] == \
            _whole_file_lambdas(lines, line)
