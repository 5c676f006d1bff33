"""Solves differentiated implicitly: custom_linear_solve and custom_root.

Each result is the user's solver's, and its derivatives come from the equation solved, not
from the solver's iterations (JAX's contract):

- custom_linear_solve(matvec, b, solve): x = solve(matvec, b) with A x = b. Forward mode
  solves A x_dot = b_dot - A_dot x; reverse mode solves A^T b_bar = x_bar with
  transpose_solve (given the transpose of matvec) and pulls -b_bar back through A_dot x.
- custom_root(f, x0, solve, tangent_solve): x = solve(f, x0) with f(x) = 0. Forward mode
  solves J x_dot = -f_dot (J: f linearised in x at the root) with tangent_solve; reverse
  mode is that rule transposed (tangent_solve's own reverse mode in its right-hand side).

The values the user's functions capture (the parameters the solution depends on) become
one explicit argument, a tuple (packed_closure, closure_convert's form for a function of
one argument), so the rules (a custom_vjp with a forward rule beside it) see and
differentiate them. The rules call the solvers again for their tangent solves, so a
derivative of a derivative goes through the rules too. The library functions here are read
by source and specialised on the user's functions (compiler/frontend/specialise.py), so
jit, vmap and the derivatives all see the calls of those functions.
"""
from __future__ import annotations

from typing import Callable

from redraft.closures import packed_closure
from redraft.compiler.primitives.registry import defbatch_source, defsource_derivative
from redraft.compiler.transforms.calls.custom import custom_vjp
from redraft.numpy.creation import zeros_like
from redraft.runtime.pytree import tree_map
from redraft.transforms import jvp, vjp

__all__ = ["custom_linear_solve", "custom_root"]


def _first(out, has_aux: bool):
    """The solution, without the solver's auxiliary output."""
    if has_aux:
        return out[0]
    return out


def _negate(tree):
    if isinstance(tree, (tuple, list, dict)):
        return tree_map(lambda t: -t, tree)
    return -tree


def _subtract(a, b):
    if isinstance(a, (tuple, list, dict)):
        return tree_map(lambda u, v: u - v, a, b)
    return a - b


def _zeros_like(tree):
    if isinstance(tree, (tuple, list, dict)):
        return tree_map(zeros_like, tree)
    return zeros_like(tree)


# ---- custom_linear_solve ----------------------------------------------------------------------

def custom_linear_solve(matvec: Callable, b, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False):
    """x = solve(matvec, b), differentiated as the solution of matvec(x) = b: forward mode
    through `solve` again, reverse mode through `transpose_solve(vecmat, x_bar)` (`solve`
    itself when `symmetric`)."""
    packed, consts = packed_closure(matvec)
    if symmetric:  # each call passes the solvers themselves, so the rules know them
        return _linear_solve(packed, solve, solve, has_aux, b, consts)
    return _linear_solve(packed, solve, transpose_solve, has_aux, b, consts)


def _linear_solve(matvec, solve, transpose_solve, has_aux, b, consts):
    return solve(lambda x: matvec(x, consts), b)


def _linear_solve_fwd(matvec, solve, transpose_solve, has_aux, b, consts):
    out = _linear_solve(matvec, solve, transpose_solve, has_aux, b, consts)
    return out, (_first(out, has_aux), consts)


def _linear_solve_bwd(matvec, solve, transpose_solve, has_aux, res, ct):
    if transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    x, consts = res
    x_bar = _first(ct, has_aux)
    vecmat = lambda y: vjp(lambda u: matvec(u, consts), x)[1](y)[0]  # noqa: E731
    b_bar = _first(transpose_solve(vecmat, x_bar), has_aux)
    _, pull_consts = vjp(lambda c: matvec(x, c), consts)
    consts_bar = pull_consts(_negate(b_bar))[0]
    return b_bar, consts_bar


def _linear_solve_jvp(matvec, solve, transpose_solve, has_aux, primals, tangents):
    b, consts = primals
    b_dot, consts_dot = tangents
    out = _linear_solve(matvec, solve, transpose_solve, has_aux, b, consts)
    x = _first(out, has_aux)
    _, matvec_dot = jvp(lambda c: matvec(x, c), (consts,), (consts_dot,))
    rhs = _subtract(b_dot, matvec_dot)
    out_dot = _linear_solve(matvec, solve, transpose_solve, has_aux, rhs, consts)
    if has_aux:
        return out, (out_dot[0], _zeros_like(out[1]))
    return out, out_dot


_linear_solve = custom_vjp(_linear_solve, nondiff_argnums=(0, 1, 2, 3))
_linear_solve.defvjp(_linear_solve_fwd, _linear_solve_bwd)
_linear_solve.jvp_rule = _linear_solve_jvp


# ---- custom_root ------------------------------------------------------------------------------

def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """x = solve(f, initial_guess), a root of f, differentiated as one: the tangent solves
    tangent_solve(g, y) -> u with g(u) = y for g, f linearised at the root. No derivative
    flows to initial_guess."""
    packed, consts = packed_closure(f)
    return _root(packed, solve, tangent_solve, has_aux, initial_guess, consts)


def _root(f, solve, tangent_solve, has_aux, guess, consts):
    return solve(lambda x: f(x, consts), guess)


def _root_jvp(f, solve, tangent_solve, has_aux, primals, tangents):
    guess, consts = primals
    _, consts_dot = tangents
    out = _root(f, solve, tangent_solve, has_aux, guess, consts)
    x = _first(out, has_aux)
    _, f_dot = jvp(lambda c: f(x, c), (consts,), (consts_dot,))
    x_dot = _negate(tangent_solve(lambda u: jvp(lambda y: f(y, consts), (x,), (u,))[1], f_dot))
    if has_aux:
        return out, (x_dot, _zeros_like(out[1]))
    return out, x_dot


def _root_fwd(f, solve, tangent_solve, has_aux, guess, consts):
    out = _root(f, solve, tangent_solve, has_aux, guess, consts)
    return out, (guess, _first(out, has_aux), consts)


def _root_bwd(f, solve, tangent_solve, has_aux, res, ct):
    """The forward rule transposed: w = tangent_solve's transpose applied to x_bar (the
    reverse mode of the linear map y -> tangent_solve(g, y)), then consts_bar = -w J_c."""
    guess, x, consts = res
    x_bar = _first(ct, has_aux)
    _, pull_solve = vjp(lambda y: tangent_solve(
        lambda u: jvp(lambda z: f(z, consts), (x,), (u,))[1], y), x)
    w = pull_solve(x_bar)[0]
    _, pull_consts = vjp(lambda c: f(x, c), consts)
    consts_bar = pull_consts(_negate(w))[0]
    return _zeros_like(guess), consts_bar


_root = custom_vjp(_root, nondiff_argnums=(0, 1, 2, 3))
_root.defvjp(_root_fwd, _root_bwd)
_root.jvp_rule = _root_jvp


for _fn in (custom_linear_solve, custom_root):
    defsource_derivative(_fn, "a custom_vjp with a forward rule (_linear_solve, _root)")
    defbatch_source(_fn)
