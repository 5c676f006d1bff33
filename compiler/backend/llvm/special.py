"""digamma and erf_inv: computed in float64 by the reference's own steps.

Their NumPy implementations (compiler/primitives/elementwise.py) widen to float64, run a
fixed sequence of operations (a recurrence and an asymptotic series; Giles' starting point
and two Newton steps on erf) and round back. The rules here emit the same operations in the
same order on registers of any lane count, with the C library's log, tan, erf and exp per
lane, so compiled float32 results equal eager ones and the gradients of lgamma (digamma)
and of the normal quantile (erf_inv) no longer send a function to the interpreter.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from redraft.compiler.primitives import elementwise as ew

from .elementwise import convert, libm, rule
from .types import constant, intrinsic, lanes_of

F64 = np.dtype(np.float64)
GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


class Wide:
    """float64 arithmetic on registers of one lane count; Python floats become constants."""

    def __init__(self, b: ir.IRBuilder, lanes: int):
        self.b, self.lanes = b, lanes

    def value(self, v) -> ir.Value:
        """`v` as a register: a Python number becomes a float64 constant of these lanes."""
        return constant(F64, float(v), self.lanes) if isinstance(v, (int, float)) else v

    def add(self, x, y):
        return self.b.fadd(self.value(x), self.value(y))

    def sub(self, x, y):
        return self.b.fsub(self.value(x), self.value(y))

    def mul(self, x, y):
        return self.b.fmul(self.value(x), self.value(y))

    def div(self, x, y):
        return self.b.fdiv(self.value(x), self.value(y))

    def less(self, x, y):
        return self.b.fcmp_ordered("<", self.value(x), self.value(y))

    def equal(self, x, y):
        return self.b.fcmp_ordered("==", self.value(x), self.value(y))

    def select(self, cond, x, y):
        return self.b.select(cond, self.value(x), self.value(y))

    def call(self, name: str, *args):
        """The C library's `name` (float64), lane by lane."""
        return libm(self.b, name, [self.value(a) for a in args], F64)

    def intrinsic(self, name: str, *args):
        return intrinsic(self.b, name, [self.value(a) for a in args])


def _digamma(b, args, dtypes, out, params):
    x, dt = args[0], dtypes[0]
    w = Wide(b, lanes_of(x))
    v = convert(b, x, dt, F64)
    reflect = w.less(v, 0.5)
    z = w.select(reflect, w.sub(1.0, v), v)
    acc = w.value(0.0)
    for _ in range(6):
        small = w.less(z, 6.0)
        acc = w.sub(acc, w.select(small, w.div(1.0, w.select(small, z, 1.0)), 0.0))
        z = w.select(small, w.add(z, 1.0), z)
    inv2 = w.div(1.0, w.mul(z, z))
    tail = w.mul(inv2, 1 / 240)
    tail = w.mul(inv2, w.sub(1 / 252, tail))
    tail = w.mul(inv2, w.sub(1 / 120, tail))
    series = w.sub(w.sub(w.call("log", z), w.div(0.5, z)), w.mul(inv2, w.sub(1 / 12, tail)))
    result = w.add(acc, series)
    result = w.select(reflect, w.sub(result, w.div(np.pi, w.call("tan", w.mul(np.pi, v)))),
                      result)
    pole = b.and_(b.fcmp_ordered("<=", v, w.value(0.0)), w.equal(v, w.intrinsic("llvm.floor", v)))
    result = w.select(pole, math.nan, result)
    return convert(b, result, F64, dt)


def _horner(w: Wide, coeffs: tuple, x):
    acc = w.value(coeffs[0])
    for c in coeffs[1:]:
        acc = w.add(w.mul(acc, x), c)
    return acc


def _erf_inv(b, args, dtypes, out, params):
    x, dt = args[0], dtypes[0]
    w = Wide(b, lanes_of(x))
    v = convert(b, x, dt, F64)
    t = b.fneg(w.call("log", w.mul(w.sub(1.0, v), w.add(1.0, v))))
    central = _horner(w, GILES_CENTRAL, w.sub(t, 2.5))
    tail = _horner(w, GILES_TAIL, w.sub(w.intrinsic("llvm.sqrt", t), 3.0))
    guess = w.mul(w.select(w.less(t, 5.0), central, tail), v)
    slope = 2 / math.sqrt(math.pi)
    for _ in range(2):
        err = w.sub(w.call("erf", guess), v)
        guess = w.sub(guess, w.div(err, w.mul(slope, w.call("exp", w.mul(b.fneg(guess),
                                                                          guess)))))
    size = w.intrinsic("llvm.fabs", v)
    guess = w.select(w.equal(size, 1.0), w.intrinsic("llvm.copysign", w.value(math.inf), v),
                     guess)
    guess = w.select(b.fcmp_ordered(">", size, w.value(1.0)), math.nan, guess)
    return convert(b, guess, F64, dt)


rule(ew.digamma_p, cost=60)(_digamma)
rule(ew.erf_inv_p, cost=60)(_erf_inv)
