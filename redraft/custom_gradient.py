"""jax.custom_gradient: a function that returns its value and its own vjp rule.

    @redraft.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * 2 * x,)

It is a custom_vjp whose forward pass keeps the rule the function returned and whose
backward pass calls it (a single cotangent may be returned bare, as in JAX). The transforms
read the forward and backward functions' source, which has fixed arities: functions of one
to four positional arguments are accepted, and others are refused with a TypeError.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

from redraft.compiler.transforms.calls.custom import custom_vjp

__all__ = ["custom_gradient"]

_MOST = 4


def _arity(fun: Callable) -> int:
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        raise TypeError(f"custom_gradient needs a function with a signature, got {fun!r}")
    kinds = {p.kind for p in params}
    if kinds - {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD} \
            or not 1 <= len(params) <= _MOST:
        raise TypeError(f"custom_gradient: {getattr(fun, '__name__', fun)} must take one to "
                        f"{_MOST} positional arguments (no *args, keywords or defaults: the "
                        "transforms read fixed-arity forward and backward functions)")
    return len(params)


def as_cotangents(cts):
    """The rule's result as a tuple of cotangents (a bare one for one argument)."""
    return cts if isinstance(cts, tuple) else (cts,)


def _backward(rule, g):
    return as_cotangents(rule(g))


def _one(fun):
    def primal(a):
        return fun(a)[0]

    def forward(a):
        return fun(a)
    return primal, forward


def _two(fun):
    def primal(a, b):
        return fun(a, b)[0]

    def forward(a, b):
        return fun(a, b)
    return primal, forward


def _three(fun):
    def primal(a, b, c):
        return fun(a, b, c)[0]

    def forward(a, b, c):
        return fun(a, b, c)
    return primal, forward


def _four(fun):
    def primal(a, b, c, d):
        return fun(a, b, c, d)[0]

    def forward(a, b, c, d):
        return fun(a, b, c, d)
    return primal, forward


_BY_ARITY = {1: _one, 2: _two, 3: _three, 4: _four}


def custom_gradient(fun: Callable) -> custom_vjp:
    """`fun(*args) -> (value, vjp)`, as a function of its value whose reverse-mode
    derivative is `vjp(g)` (a tuple of cotangents, one per argument)."""
    primal, forward = _BY_ARITY[_arity(fun)](fun)
    functools.update_wrapper(primal, fun)
    del primal.__wrapped__  # the transforms read primal's own source and parameters
    made = custom_vjp(primal)
    made.defvjp(forward, _backward)
    return made
