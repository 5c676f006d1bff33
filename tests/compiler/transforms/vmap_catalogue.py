"""Functions vmap must batch, each checked against a Python loop over the examples plus a
stack (`loop_reference`). Every function is defined at module level, because redraft reads
its source; the arguments are tiny so the whole catalogue runs in seconds."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from redraft.runtime.pytree import tree_flatten, tree_map, tree_unflatten

import redraft.numpy as jnp
from redraft import lax

RNG = np.random.RandomState(0)
N = 3  # examples


def rand(*shape, positive=False) -> np.ndarray:
    x = RNG.randn(*shape).astype(np.float32)
    return np.abs(x) + 0.5 if positive else x


MAT = jnp.asarray(rand(4, 3))  # a closed-over constant


@dataclass
class Case:
    name: str
    fn: Callable
    args: tuple
    in_axes: Any = 0
    out_axes: Any = 0
    kwargs: dict = field(default_factory=dict)
    rtol: float = 1e-5


# ---- the reference: a loop over the examples, then a stack ------------------------------------

def _take(value, spec, i):
    if spec is None:
        return value
    if isinstance(spec, (tuple, list)):
        return type(value)(_take(v, s, i) for v, s in zip(value, spec))
    if isinstance(spec, dict):
        return {k: _take(value[k], spec[k], i) for k in value}
    return tree_map(lambda leaf: jnp.asarray(np.take(np.asarray(leaf), i, axis=spec)), value)


def _size(args, specs) -> int:
    for value, spec in zip(args, specs):
        if spec is None:
            continue
        if isinstance(spec, (tuple, list)):
            return _size(value, spec)
        if isinstance(spec, dict):
            return _size([value[k] for k in spec], [spec[k] for k in spec])
        return np.shape(tree_flatten(value)[0][0])[spec]
    raise ValueError("no mapped argument")


def _stack(outs: list, spec):
    if spec is None:
        return outs[0]
    if isinstance(spec, (tuple, list)):
        return type(outs[0])(_stack([o[j] for o in outs], s) for j, s in enumerate(spec))
    if isinstance(spec, dict):
        return {k: _stack([o[k] for o in outs], spec[k]) for k in spec}
    leaves = [tree_flatten(o)[0] for o in outs]
    treedef = tree_flatten(outs[0])[1]
    stacked = [np.stack([np.asarray(ls[j]) for ls in leaves], axis=spec)
               for j in range(len(leaves[0]))]
    return tree_unflatten(treedef, stacked)


def loop_reference(fn, args, in_axes=0, out_axes=0, kwargs=None):
    """fn applied example by example (kwargs mapped along axis 0), results stacked."""
    kwargs = kwargs or {}
    specs = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    n = _size(list(args) + list(kwargs.values()), list(specs) + [0] * len(kwargs))
    outs = [fn(*[_take(a, s, i) for a, s in zip(args, specs)],
               **{k: _take(v, 0, i) for k, v in kwargs.items()}) for i in range(n)]
    return _stack(outs, out_axes)


# ---- elementwise and broadcasting --------------------------------------------------------------

def unary_chain(x):
    return jnp.tanh(jnp.exp(-x) + jnp.sin(x) * jnp.cos(x))


def scalar_times_vector(s, v):
    return s * v + 1.0


def vector_plus_matrix(v, m):
    return m + v - jnp.maximum(m, 0.0)


def where_relu(x):
    return jnp.where(x > 0, x, 0.01 * x)


def clip_and_power(x):
    return jnp.clip(x, -0.5, 0.5) ** 2 + jnp.abs(x) ** 1.5


def integer_square_sum(x):
    return jnp.sum(x ** 2)


# ---- shapes seen per example ---------------------------------------------------------------------

def shape_queries(x):
    return jnp.zeros(x.shape) + len(x) + x.ndim + x.size


def reshape_transpose(x):
    return x.reshape((2, 3)).T.reshape(-1)


def expand_squeeze(x):
    return jnp.squeeze(jnp.expand_dims(x, 0)) + jnp.expand_dims(x, -1).sum(-1)


def stack_and_concatenate(x, y):
    return jnp.concatenate([jnp.stack([x, y, x * y], axis=1).ravel(), x])


def moveaxis_swap(m):
    return jnp.swapaxes(jnp.moveaxis(m, 0, -1), 0, 1)


def static_indexing(m):
    return m[0] + m[1:, 1].sum() + m[-1, ::2].sum() + m[:, None, 0].sum()


def loop_indexing(v):
    acc = 0.0
    for i in range(3):
        acc = acc + v[i] * (i + 1)
    return acc


def at_set_add(v):
    return v.at[0].set(10.0).at[1:].add(v[0])


def batched_index_into_constant(i):
    return MAT[i] * 2.0


# ---- reductions ----------------------------------------------------------------------------------

def reductions_axes(m):
    return jnp.sum(m, axis=0) + jnp.mean(m, axis=1).sum() + jnp.max(m) + jnp.min(m, axis=-1)[0]


def keepdims_and_var(m):
    return m - m.mean(axis=1, keepdims=True) + jnp.var(m) + jnp.std(m, axis=0)[0]


def argmax_cumsum(m):
    return jnp.cumsum(m).sum() + jnp.argmax(m) + jnp.argmax(m, axis=1).sum()


def sort_and_logsumexp(v):
    return jnp.sort(v)[0] + jnp.logsumexp(v)


# ---- products ------------------------------------------------------------------------------------

def apply_matrix(x):
    return jnp.dot(MAT, x)


def vector_matrix(x, w):
    return jnp.dot(x, w)


def matmul_both(a, b):
    return a @ b


def vdot_pair(a, b):
    return jnp.vdot(a, b)


def einsum_outer(a, b):
    return jnp.einsum("i,j->ij", a, b) + jnp.outer(a, b)


def lax_dot_general(a, b):
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())))


# ---- control flow ------------------------------------------------------------------------------

def batched_if(x):
    if jnp.sum(x) > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def batched_if_one_branch(x):
    y = x
    if x[0] > 0:
        y = x + 100.0
    return y


def unbatched_if(x, flag):
    if flag:
        return x * 3.0
    return x


def batched_while(s):
    i = 0
    while s < 10.0:
        s = s * 2.0 + 1.0
        i = i + 1
    return s + i


def for_accumulate(x):
    acc = jnp.zeros_like(x)
    for k in range(4):
        acc = acc * 0.5 + jnp.sin(x + k)
    return acc


def for_over_rows(m):
    total = 0.0
    for row in m:
        total = total + jnp.sum(row * row)
    return total


def comprehension(v):
    return jnp.stack([jnp.sin(e) * 2 for e in v])


def early_return(x):
    if x > 1.0:
        return x * x
    return -x


# ---- calls of other functions ------------------------------------------------------------------

def helper_layer(w, x):
    return jnp.tanh(jnp.dot(w, x))


def calls_helper(x):
    return helper_layer(MAT, x) + helper_layer(MAT, 2.0 * x)


def power_rec(x, n):
    if n == 0:
        return 1.0
    return x * power_rec(x, n - 1)


def recursion_unbatched_depth(x):
    return power_rec(x, 3)


def default_argument(x, scale=2.0):
    return x * scale


# ---- pytrees ----------------------------------------------------------------------------------

def tuple_in_tuple_out(pair):
    a, b = pair
    return a + b, a * b


def dict_in(params, x):
    return jnp.dot(params["w"], x) + params["b"]


def dict_out(x):
    return {"sum": jnp.sum(x), "twice": 2.0 * x}


def unbatched_part_of_output(x, c):
    return x * c, c


# ---- lax control flow ---------------------------------------------------------------------------

def _fori_body(i, x):
    return x * 1.5 + i


def lax_fori(x):
    return lax.fori_loop(0, 3, _fori_body, x)


def _cond_true(x):
    return jnp.sqrt(x)


def _cond_false(x):
    return -x


def lax_cond(x):
    return lax.cond(x > 0, _cond_true, _cond_false, x)


def _lt_ten(x):
    return x < 10.0


def _double(x):
    return x * 2.0


def lax_while(x):
    return lax.while_loop(_lt_ten, _double, x)


def _scan_step(c, x):
    return c + x, c * x


def lax_scan(xs):
    return lax.scan(_scan_step, 0.0, xs)


def _b0(x):
    return x + 1.0


def _b1(x):
    return x * 10.0


def _b2(x):
    return -x


def lax_switch(i, x):
    return lax.switch(i, [_b0, _b1, _b2], x)


# ---- the catalogue -----------------------------------------------------------------------------

V, W = rand(N, 3), rand(N, 3)
M = rand(N, 2, 3)
S = rand(N)
CASES = [
    Case("unary_chain", unary_chain, (V,)),
    Case("scalar_times_vector", scalar_times_vector, (S, V)),
    Case("vector_plus_matrix", vector_plus_matrix, (V, M)),
    Case("vector_plus_shared_matrix", vector_plus_matrix, (V, rand(2, 3)), (0, None)),
    Case("where_relu", where_relu, (V,)),
    Case("clip_and_power", clip_and_power, (V,)),
    Case("integer_square_sum", integer_square_sum, (np.arange(12).reshape(3, 4),)),
    Case("shape_queries", shape_queries, (M,)),
    Case("reshape_transpose", reshape_transpose, (rand(N, 6),)),
    Case("expand_squeeze", expand_squeeze, (V,)),
    Case("stack_and_concatenate", stack_and_concatenate, (V, W)),
    Case("moveaxis_swap", moveaxis_swap, (rand(N, 2, 3, 4),)),
    Case("static_indexing", static_indexing, (rand(N, 3, 4),)),
    Case("loop_indexing", loop_indexing, (V,)),
    Case("at_set_add", at_set_add, (V,)),
    Case("batched_index_into_constant", batched_index_into_constant,
         (np.array([0, 3, 1], np.int32),)),
    Case("reductions_axes", reductions_axes, (M,)),
    Case("keepdims_and_var", keepdims_and_var, (M,)),
    Case("argmax_cumsum", argmax_cumsum, (M,)),
    Case("sort_and_logsumexp", sort_and_logsumexp, (V,)),
    Case("apply_matrix", apply_matrix, (V,)),
    Case("apply_matrix_in_axes_1", apply_matrix, (V.T.copy(),), 1),
    Case("apply_matrix_out_axes_1", apply_matrix, (V,), 0, 1),
    Case("apply_matrix_negative_axes", apply_matrix, (V.T.copy(),), -1, -1),
    Case("vector_matrix_shared_weights", vector_matrix, (V, rand(3, 5)), (0, None)),
    Case("vector_matrix_both_batched", vector_matrix, (V, rand(N, 3, 5))),
    Case("matmul_both", matmul_both, (M, rand(N, 3, 2))),
    Case("matmul_shared_right", matmul_both, (M, rand(3, 4)), (0, None)),
    Case("vdot_pair", vdot_pair, (V, W)),
    Case("vdot_shared", vdot_pair, (V, rand(3)), (0, None)),
    Case("einsum_outer", einsum_outer, (V, W)),
    Case("lax_dot_general", lax_dot_general, (M, rand(3, 2)), (0, None)),
    Case("batched_if", batched_if, (V,)),
    Case("batched_if_one_branch", batched_if_one_branch, (V,)),
    Case("unbatched_if", unbatched_if, (V, True), (0, None)),
    Case("batched_while", batched_while, (rand(N, positive=True),)),
    Case("for_accumulate", for_accumulate, (V,)),
    Case("for_over_rows", for_over_rows, (M,)),
    Case("comprehension", comprehension, (V,)),
    Case("early_return", early_return, (np.array([0.5, 2.0, 3.0], np.float32),)),
    Case("calls_helper", calls_helper, (V,)),
    Case("recursion_unbatched_depth", recursion_unbatched_depth, (V,)),
    Case("default_argument", default_argument, (V,)),
    Case("keyword_argument_mapped", default_argument, (V,), kwargs={"scale": S}),
    Case("tuple_in_tuple_out", tuple_in_tuple_out, ((V, W),)),
    Case("tuple_in_axes", tuple_in_tuple_out, ((V, rand(3)),), ((0, None),)),
    Case("dict_in", dict_in, ({"w": rand(4, 3), "b": rand(4)}, V), (None, 0)),
    Case("dict_in_axes", dict_in, ({"w": rand(4, 3), "b": rand(N, 4)}, V),
         ({"w": None, "b": 0}, 0)),
    Case("dict_out", dict_out, (V,)),
    Case("out_axes_none_for_unbatched", unbatched_part_of_output, (V, np.float32(2.0)),
         (0, None), (0, None)),
    Case("out_axes_tuple", tuple_in_tuple_out, ((V, W),), 0, (1, 0)),
    Case("lax_fori", lax_fori, (V,)),
    Case("lax_cond", lax_cond, (S,)),
    Case("lax_while", lax_while, (rand(N, positive=True),)),
    Case("lax_scan", lax_scan, (rand(N, 4),)),
    Case("lax_switch", lax_switch, (np.array([0, 2, 7], np.int32), S)),
]
