"""Batching rules of elementwise operations: the same call, with batched operands aligned so
that NumPy broadcasting pairs per-example axes (`vm.align`), and operators on sequences."""
import operator

import numpy as np
from redraft.compiler.core import helpers, ir
from redraft.compiler.frontend import methods
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import elementwise, loop_rule
from redraft.compiler.transforms.batch.batching import defbatch, defnotbatchable
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref

import redraft.numpy as jnp

# The jnp functions written on several primitives; those that are one primitive (jnp.exp,
# jnp.add) batch as their primitive, declared in compiler/primitives/elementwise.py.
UNARY = ("positive", "log2", "log10", "real", "imag", "conj", "conjugate", "floor", "ceil",
         "square", "reciprocal", "logical_not", "bitwise_not", "invert", "bitwise_count",
         "isnan", "isfinite", "isinf", "isposinf", "isneginf", "signbit", "deg2rad", "rad2deg",
         "degrees", "radians", "sinc", "fabs", "trunc", "fix", "rint", "angle", "i0",
         "spacing", "modf")
BINARY = ("floor_divide", "remainder", "mod", "fmod", "copysign", "logaddexp", "logaddexp2",
          "hypot", "heaviside", "float_power", "logical_and", "logical_or", "logical_xor",
          "fmax", "fmin", "gcd", "lcm", "ldexp", "bitwise_left_shift", "bitwise_right_shift",
          "pow")

for _name in UNARY + BINARY:
    _fn = getattr(jnp, _name, None)
    if _fn is not None:
        defbatch(_fn, elementwise())

defbatch(jnp.round, elementwise(static=("decimals",)))
defbatch(jnp.around, elementwise(static=("decimals",)))
defbatch(jnp.divmod, elementwise(result=bt.tup((bt.B, bt.B))))
defbatch(jnp.frexp, elementwise(result=bt.tup((bt.B, bt.B))))  # (mantissa, exponent)
defbatch(jnp.isclose, elementwise(static=("rtol", "atol", "equal_nan")))
defbatch(jnp.nan_to_num, elementwise(static=("copy", "nan", "posinf", "neginf")))
defbatch(jnp.astype, elementwise(static=("dtype", "copy")))
defbatch(helpers.astype, elementwise(static=("dtype",)))
defbatch(jnp.clip, elementwise(kw_operands=("min", "max")))


def _where(b):
    if len(b.call.args) < 3:
        return loop_rule(b)
    return elementwise()(b)


_where.rank_exact = lambda call: len(call.args) == 3
defbatch(jnp.where, _where)

# ---- Python operators: arrays elementwise, sequences structurally ------------------------------

def _sequence_add(b):
    """`a + b` on tuples and lists: concatenation, item types kept."""
    ta, tb = (b.ctx.type_of(a) for a in b.call.args)
    if isinstance(ta, bt.Tuple) and isinstance(tb, bt.Tuple):
        return b.call, bt.tup((*ta.items, *tb.items))
    return b.call, bt.seq(bt.join(bt.element(ta), bt.element(tb)))


def _sequence_mul(b):
    """`[x] * 3`: repetition."""
    t = bt.join(*(b.ctx.type_of(a) for a in b.call.args))
    return b.call, bt.seq(bt.element(t))


def _operator(array_rule, sequence_rule=None):
    def rule(b):
        types = [b.ctx.type_of(a) for a in b.call.args]
        if sequence_rule is not None and any(bt.is_sequence(t) for t in types):
            return sequence_rule(b)
        return array_rule(b)
    rule.rank_exact = getattr(array_rule, "rank_exact", False)  # tuples: see vmap_ranks.py
    return rule


_ARITH = elementwise()
defbatch(operator.add, _operator(_ARITH, _sequence_add))
defbatch(operator.mul, _operator(_ARITH, _sequence_mul))
for _op in (operator.sub, operator.truediv, operator.floordiv, operator.mod, operator.pow,
            operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift,
            operator.neg, operator.pos, operator.invert, operator.lt, operator.le,
            operator.gt, operator.ge, operator.eq, operator.ne, operator.abs):
    defbatch(_op, _ARITH)


def _not(b):
    """`not x` of a per-example truth value: logical_not."""
    return ir.Call(jnp_ref("logical_not"), b.call.args), bt.B


def _identity_test(b):
    """`x is None` asks about the Python object, the same for every example."""
    return b.call, bt.U


defbatch(operator.not_, _not)
defbatch(operator.is_, _identity_test)
defbatch(operator.is_not, _identity_test)
defnotbatchable(methods.contains, "`in` on a batched value asks a question about all examples")
defnotbatchable(methods.not_contains,
                "`not in` on a batched value asks a question about all examples")

del np
