"""Derivative rules of the helpers the elementwise lax rules call (`lad.polygamma`,
`lad.complex_like`, ...). The lax functions' own rules are their primitives' rules, in
compiler/primitives/elementwise.py; these helpers live in the generated-code library above
it, so their rules are written here."""
from redraft import lax
from redraft.compiler.transforms.runtime import lad
from redraft.compiler.primitives.registry import defjvp, defnondiff, defstatic, defvjp

defjvp(lad.polygamma, None, lambda x_dot, ans, n, x: x_dot * lad.polygamma(n + 1, x))
defvjp(lad.polygamma, None, lambda g, ans, n, x: g * lad.polygamma(n + 1, x))
defstatic(lad.polygamma, "n")

defjvp(lad.complex_like, lambda g_dot, ans, g, x: lad.complex_like(g_dot, x))
defvjp(lad.complex_like, lambda ct, ans, g, x: lax.real(ct))
defstatic(lad.complex_like, "x")

for _op in (lad.drops_imaginary, lad.is_inexact):
    defnondiff(_op, "a test of dtypes")
for _op in (lad.trunc_quotient, lad.clamp_weights):
    defnondiff(_op, "piecewise constant in its arguments")
