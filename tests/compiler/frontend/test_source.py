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
