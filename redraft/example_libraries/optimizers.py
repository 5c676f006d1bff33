"""Optimizers as triples of functions, with the interface of jax.example_libraries.optimizers.

An optimizer is `(init_fun, update_fun, get_params)`:

    opt_init, opt_update, get_params = adam(1e-3)
    state = opt_init(params)                 # params: any pytree of arrays
    state = opt_update(step, grads, state)   # grads: a pytree like params
    params = get_params(state)

Each optimizer is written for one array and lifted to pytrees by the `optimizer` decorator;
the state is an `OptimizerState`, itself a pytree, so it passes through jit and vmap. Step
sizes are numbers or schedules (functions of the step count).
"""
from __future__ import annotations

import builtins
import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import redraft.numpy as jnp
from redraft.runtime.pytree import (register_pytree_node, tree_flatten, tree_leaves, tree_map,
                                    tree_unflatten)

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]
partial = functools.partial
_map, _zip = builtins.map, builtins.zip

__all__ = ["Optimizer", "OptimizerState", "JoinPoint", "optimizer", "sgd", "momentum",
           "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads",
           "unpack_optimizer_state", "pack_optimizer_state", "safe_map", "safe_zip", "unzip2"]


def safe_map(f: Callable, *args) -> list:
    """map that insists its arguments have one length."""
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"safe_map: lengths differ: {[len(x) for x in args]}")
    return [f(*xs) for xs in _zip(*args)]


def safe_zip(*args) -> list:
    """zip that insists its arguments have one length."""
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"safe_zip: lengths differ: {[len(x) for x in args]}")
    return list(_zip(*args))


def unzip2(pairs) -> tuple[tuple, tuple]:
    """[(a, b), ...] -> ((a, ...), (b, ...))."""
    firsts = [p[0] for p in pairs]
    seconds = [p[1] for p in pairs]
    return tuple(firsts), tuple(seconds)


# ---- the state: a pytree of per-leaf states --------------------------------------------------

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = ("The state of a lifted optimizer: the flat per-leaf states, the "
                          "parameters' tree structure and each leaf state's structure.")


def _state_flatten(state: OptimizerState):
    return (state.packed_state,), (state.tree_def, state.subtree_defs)


def _state_unflatten(aux, children) -> OptimizerState:
    return OptimizerState(children[0], aux[0], aux[1])


register_pytree_node(OptimizerState, _state_flatten, _state_unflatten)


class Optimizer(NamedTuple):
    """The triple every optimizer returns."""
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _init_states(init: Callable, x0_tree) -> OptimizerState:
    x0_flat, tree = tree_flatten(x0_tree)
    initial = [init(x0) for x0 in x0_flat]
    pairs = [tree_flatten(s) for s in initial]
    states_flat = tuple(p[0] for p in pairs)
    subtrees = tuple(p[1] for p in pairs)
    return OptimizerState(states_flat, tree, subtrees)


def _update_states(update: Callable, i, grad_tree, opt_state: OptimizerState):
    states_flat, tree, subtrees = opt_state
    grad_flat, tree2 = tree_flatten(grad_tree)
    if tree2 != tree:
        raise TypeError(f"optimizer update: the gradient's tree structure {tree2} differs "
                        f"from the parameters' {tree}")
    new_flat = []
    for g, sub, flat in _zip(grad_flat, subtrees, states_flat):
        new_state = update(i, g, tree_unflatten(sub, flat))
        leaves, sub2 = tree_flatten(new_state)
        if sub2 != sub:
            raise TypeError(f"optimizer update: the state's structure changed from {sub} "
                            f"to {sub2}")
        new_flat.append(leaves)
    return OptimizerState(tuple(new_flat), tree, subtrees)


def _get_params(get_params: Callable, opt_state: OptimizerState):
    states_flat, tree, subtrees = opt_state
    params = [get_params(tree_unflatten(sub, flat)) for sub, flat in _zip(subtrees, states_flat)]
    return tree_unflatten(tree, params)


def optimizer(opt_maker: Callable) -> Callable:
    """Decorator: lift an optimizer written for one array to one over pytrees of arrays.

    `opt_maker(*args)` returns `(init, update, get_params)` for a single array, where
    `init(x) -> state`, `update(i, g, state) -> state` and `get_params(state) -> x`; a state
    may be any pytree. The decorated maker returns an `Optimizer` over whole pytrees."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree) -> OptimizerState:
            return _init_states(init, x0_tree)

        def tree_update(i, grad_tree, opt_state: OptimizerState) -> OptimizerState:
            return _update_states(update, i, grad_tree, opt_state)

        def tree_get_params(opt_state: OptimizerState):
            return _get_params(get_params, opt_state)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---- schedules -------------------------------------------------------------------------------

def constant(step_size) -> Schedule:
    """The step size at every step."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase: bool = False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), the ratio floored when staircase."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps along (1 - i/decay_steps)**power."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """values[k] for boundaries[k-1] <= i < boundaries[k] (values has one more entry)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("piecewise_constant: boundaries must be one shorter than values")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule from a number (constant) or a callable (itself)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if not isinstance(scalar_or_schedule, (str, bytes)) and jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"make_schedule: expected a number or a callable, "
                    f"got {type(scalar_or_schedule).__name__}")


# ---- optimizers ------------------------------------------------------------------------------

def _identity(x):
    return x


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    return init, update, _identity


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Heavy-ball momentum: v = mass * v + g; x = x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * velocity
        return x, velocity

    return init, update, _first


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated momentum: x = x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * (mass * velocity + g)
        return x, velocity

    return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        g_sq = jnp.zeros_like(x0)
        m = jnp.zeros_like(x0)
        return x0, g_sq, m

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        return x, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divide the gradient by a running root mean square of its recent values."""
    step_size = make_schedule(step_size)

    def init(x0):
        avg_sq_grad = jnp.zeros_like(x0)
        return x0, avg_sq_grad

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        x = x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x, avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def init(x0):
        avg_sq_grad = jnp.zeros_like(x0)
        mom = jnp.zeros_like(x0)
        return x0, avg_sq_grad, mom

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        x = x - mom
        return x, avg_sq_grad, mom

    return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2014): bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        m0 = jnp.zeros_like(x0)
        v0 = jnp.zeros_like(x0)
        return x0, m0, v0

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        x = x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps)
        return x, m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam's infinity-norm variant (Kingma and Ba 2014, section 7)."""
    step_size = make_schedule(step_size)

    def init(x0):
        m0 = jnp.zeros_like(x0)
        u0 = jnp.zeros_like(x0)
        return x0, m0, u0

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, _first


def _sm3_accumulator_shapes(shape: tuple) -> list:
    """One accumulator per axis, of the array's shape with every other axis set to 1."""
    return [tuple(d if k == j else 1 for k, d in enumerate(shape)) for j in range(len(shape))]


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): memory-efficient adaptive steps, one accumulator per axis."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(s, dtype=x0.dtype) for s in _sm3_accumulator_shapes(x0.shape)]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = jnp.atleast_1d(g)
        v = vs[0]
        for other in vs[1:]:
            v = jnp.minimum(v, other)
        v = v + jnp.square(g)
        accums = []
        for j in range(g.ndim):
            axes = tuple(k for k in range(g.ndim) if k != j)
            accums.append(jnp.max(v, axis=axes, keepdims=True))
        g_scaled = jnp.where(v > 0, g / jnp.sqrt(jnp.where(v > 0, v, 1.0)), 0.0)
        m = (1. - momentum) * g_scaled + momentum * m
        x = x - step_size(i) * m
        return x, m, accums, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return jnp.reshape(x, x_shape)

    return init, update, get_params


# ---- utilities -------------------------------------------------------------------------------

def l2_norm(tree) -> Array:
    """The l2 norm of all the leaves of a pytree, as one vector."""
    leaves = tree_leaves(tree)
    squares = jnp.stack([jnp.sum(jnp.square(x)) for x in leaves])
    return jnp.sqrt(jnp.sum(squares))


def _scale(x, factor):
    return x * factor


def clip_grads(grad_tree, max_norm) -> Any:
    """Scale a gradient pytree down so that its l2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)
    factor = jnp.where(norm < max_norm, 1.0, max_norm / norm)
    return tree_map(functools.partial(_scale, factor=factor), grad_tree)


class JoinPoint:
    """Marks where a subtree's structure ends in a packed optimizer state."""

    def __init__(self, subtree) -> None:
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as nested Python containers of arrays (for saving, e.g. with pickle)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [JoinPoint(tree_unflatten(sub, flat))
                for sub, flat in _zip(subtree_defs, states_flat)]
    return tree_unflatten(tree_def, subtrees)


def pack_optimizer_state(marked_pytree) -> OptimizerState:
    """The inverse of unpack_optimizer_state."""
    sentinels, tree_def = tree_flatten(marked_pytree, is_leaf=_is_join_point)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected a tree from unpack_optimizer_state")
    pairs = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState(tuple(p[0] for p in pairs), tree_def, tuple(p[1] for p in pairs))


def _is_join_point(x) -> bool:
    return isinstance(x, JoinPoint)


map = safe_map  # noqa: A001 - as in JAX's module: the length-checked forms
zip = safe_zip  # noqa: A001
