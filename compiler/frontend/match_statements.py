"""Desugar `match` statements into `if`/`else` chains, before lowering.

    match mode:                        if mode == "sum" or mode == "total":
        case "sum" | "total":              A
            A                 ==>      else:
        case None:                         if mode is None:
            B                                  B
        case other if f(other):            else:
            C                                  other = mode
        case _:                                if f(other):
            D                                      C
                                               else:
                                                   D

A subject that is not a plain name is evaluated once into `match_subject_<line>`. Patterns of
values, singletons, captures, the wildcard, `|` of those, sequences of a fixed length,
mappings without `**rest` and `Cls()` with no arguments are read; a `*rest` or a class
pattern with arguments is refused at the user's line (the caller's `fail`). Transformed
functions then see the conditions as they see any `if`: decided when the subject is a
static value (a string mode, a None default), staged when it is an array.
"""
from __future__ import annotations

from typing import Callable

import gast


def desugar(fn_node: gast.FunctionDef, fail: Callable[[object, str], None]) -> None:
    """Replace every `match` in `fn_node`'s body (nested blocks included, nested functions
    left to their own lowering) by its `if` chain; `fail(node, message)` raises."""
    fn_node.body = _block(fn_node.body, fail)


def has_match(fn_node) -> bool:
    return any(isinstance(n, gast.Match) for n in gast.walk(fn_node))


def _block(body: list, fail) -> list:
    out = []
    for stmt in body:
        if isinstance(stmt, gast.Match):
            out.extend(_match(stmt, fail))
            continue
        if not isinstance(stmt, (gast.FunctionDef, gast.Lambda)):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block:
                    setattr(stmt, field, _block(block, fail))
            for handler in getattr(stmt, "handlers", []) or []:
                handler.body = _block(handler.body, fail)
        out.append(stmt)
    return out


def _match(node: gast.Match, fail) -> list:
    """The statements standing for one `match`: the subject's evaluation, then the chain."""
    before = []
    subject = node.subject
    if not isinstance(subject, gast.Name):
        name = f"match_subject_{node.lineno}"
        before.append(_located(gast.Assign(targets=[_name(name, store=True)], value=subject,
                                           type_comment=None), node))
        subject = _name(name)
    return before + _cases(list(node.cases), subject, node, fail)


def _cases(cases: list, subject: gast.Name, node, fail) -> list:
    """The chain for `cases` (those before it did not match). A case's names are bound
    once its pattern matched, before its guard, as Python binds them."""
    if not cases:
        return []
    case, rest = cases[0], cases[1:]
    test, binds = _condition(case.pattern, _name(subject.id), fail)
    body = _block(list(case.body), fail)
    assigns = [_located(gast.Assign(targets=[_name(n, store=True)], value=value,
                                    type_comment=None), case.pattern) for n, value in binds]
    if case.guard is not None:
        body = [_located(gast.If(test=case.guard, body=body or [gast.Pass()],
                                 orelse=_cases(rest, subject, node, fail)), case.guard)]
    if test is None:  # the pattern always matches: later cases only behind a guard
        return assigns + body
    orelse = _cases(rest, subject, node, fail)
    return [_located(gast.If(test=test, body=assigns + body or [gast.Pass()], orelse=orelse),
                     case.pattern)]


def _condition(pattern, subject, fail) -> tuple:
    """(the test of `pattern` against the expression `subject`, None where it always
    matches; the (name, expression) pairs it binds when it matches)."""
    if isinstance(pattern, gast.MatchValue):
        return _compare(subject, gast.Eq(), pattern.value, pattern), []
    if isinstance(pattern, gast.MatchSingleton):
        return _compare(subject, gast.Is(), gast.Constant(value=pattern.value, kind=None),
                        pattern), []
    if isinstance(pattern, gast.MatchAs):
        test, binds = (None, []) if pattern.pattern is None else _condition(
            pattern.pattern, subject, fail)
        return test, binds + ([(pattern.name, subject)] if pattern.name is not None else [])
    if isinstance(pattern, gast.MatchOr):
        tests = []
        for alternative in pattern.patterns:
            test, binds = _condition(alternative, subject, fail)
            if binds:
                fail(pattern, "a `|` pattern that captures names is not supported in "
                              "transformed functions yet; use if/elif")
            if test is None:
                return None, []
            tests.append(test)
        return _located(gast.BoolOp(op=gast.Or(), values=tests), pattern), []
    if isinstance(pattern, gast.MatchSequence) and not any(
            isinstance(p, gast.MatchStar) for p in pattern.patterns):
        kinds = gast.Tuple(elts=[_name("list"), _name("tuple")], ctx=gast.Load())
        tests = [_call("isinstance", [subject, kinds], pattern),
                 _compare(_call("len", [subject], pattern), gast.Eq(),
                          gast.Constant(value=len(pattern.patterns), kind=None), pattern)]
        return _all_of(tests, [(p, _item(subject, k, p))
                               for k, p in enumerate(pattern.patterns)], pattern, fail)
    if isinstance(pattern, gast.MatchMapping) and pattern.rest is None:
        tests = [_call("isinstance", [subject, _name("dict")], pattern)] + [
            _compare(key, gast.In(), subject, pattern) for key in pattern.keys]
        return _all_of(tests, [(p, _item(subject, key, p, constant=False))
                               for key, p in zip(pattern.keys, pattern.patterns)],
                       pattern, fail)
    if isinstance(pattern, gast.MatchClass) and not pattern.patterns and not pattern.kwd_patterns:
        return _call("isinstance", [subject, pattern.cls], pattern), []
    fail(pattern, f"`{type(pattern).__name__}` patterns (with a *rest, or a class with "
                  "arguments) are not supported in transformed functions yet; use if/elif")
    return None, []


def _all_of(tests: list, parts: list, pattern, fail) -> tuple:
    """The conjunction of `tests` and of each (sub-pattern, item expression) in `parts`,
    with the names the sub-patterns bind."""
    binds: list = []
    for sub, item in parts:
        test, more = _condition(sub, item, fail)
        if test is not None:
            tests.append(test)
        binds += more
    return _located(gast.BoolOp(op=gast.And(), values=tests), pattern), binds


def _compare(left, op, right, where):
    return _located(gast.Compare(left=left, ops=[op], comparators=[right]), where)


def _call(fn: str, args: list, where):
    return _located(gast.Call(func=_name(fn), args=args, keywords=[]), where)


def _item(subject, key, where, constant: bool = True):
    index = gast.Constant(value=key, kind=None) if constant else key
    return _located(gast.Subscript(value=subject, slice=index, ctx=gast.Load()), where)


def _name(id_: str, store: bool = False) -> gast.Name:
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _located(new, old):
    """`new` with `old`'s position (and every child lacking one)."""
    gast.copy_location(new, old)
    for child in gast.walk(new):
        if getattr(child, "lineno", None) is None and "lineno" in getattr(child, "_attributes",
                                                                          ()):
            gast.copy_location(child, old)
    return new
