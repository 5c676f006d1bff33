"""Vectorised transcendental functions written as branch-free polynomials in LLVM IR.

libm calls stay scalar in LLVM-generated loops (and `-vector-library` does nothing on
LLVM 22), so each function here is emitted as IR on any float/double scalar or vector type:
`emit_exp(module, ty)` defines `redraft.vecmath.exp.<ty>` once (internal, alwaysinline)
and returns it. `VECMATH` maps primitive names to emitters for the backend, `ARITY` gives
their argument counts. Calls to them inline; the scalar versions are branch-free too, so
LLVM's loop vectoriser can also widen a scalar call inside a loop.

Max error measured against float64 (for float32) or long double (for float64) NumPy over
wide sampled ranges, subnormals and special values included (see each docstring):

    op        float32  float64      op        float32  float64
    exp       0.97     0.97         tanh      1.50     1.50
    expm1     1.41     1.71         logistic  2.27     2.12
    log       0.82     0.80         erf       0.89     -
    log1p     1.36     1.23         pow       0.50     -
    sin, cos  1.54     1.55  (for |x| <= 2**40)

Emitters raise NotImplementedError for the missing float64 versions (erf, pow) so a caller
can fall back to libm, and TypeError for non-floating types.
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from .erf import emit_erf
from .exp import emit_exp, emit_expm1
from .hyperbolic import emit_logistic, emit_tanh
from .log import emit_log, emit_log1p
from .power import emit_pow
from .trig import emit_cos, emit_sin

Emitter = Callable[[ir.Module, ir.Type], ir.Function]

VECMATH: dict[str, Emitter] = {
    "exp": emit_exp,
    "expm1": emit_expm1,
    "log": emit_log,
    "log1p": emit_log1p,
    "sin": emit_sin,
    "cos": emit_cos,
    "tanh": emit_tanh,
    "logistic": emit_logistic,
    "erf": emit_erf,
    "pow": emit_pow,
}

ARITY: dict[str, int] = {name: 2 if name == "pow" else 1 for name in VECMATH}

__all__ = ["VECMATH", "ARITY", "Emitter", "emit_exp", "emit_expm1", "emit_log", "emit_log1p",
           "emit_sin", "emit_cos", "emit_tanh", "emit_logistic", "emit_erf", "emit_pow"]
