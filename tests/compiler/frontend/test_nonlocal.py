"""A local function assigning a `nonlocal` of the transformed function that defines it:
each direct call passes the new value back (`t, total = add(v, total)`), in loops and
branches too. Expected values are JAX 0.10.2's for the same functions, stored here; a use of
such a function as a value (returned, passed to lax.scan or a transform) is refused at the
user's line, where JAX's trace would leak the value."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax
from redraft.compiler.frontend.normalize import UnsupportedSyntaxError

X = jnp.arange(3.0)


def accumulate(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    add(x)
    add(x * 2)
    return jnp.sum(total)


def accumulate_in_a_loop(x):
    total = jnp.zeros(3)

    def add(v):
        nonlocal total
        total = total + v * v
        return total
    for i in range(3):
        add(x * i)
    return jnp.sum(total)


def accumulate_in_branches(x):
    total = 0.0

    def add(v):
        nonlocal total
        total += v
    if jnp.sum(x) > 0:
        add(x)
    else:
        add(-x)
    add(x * 3)
    return jnp.sum(total * x)


def count_calls(x):
    count = 0

    def bump(v):
        nonlocal count
        count += 1
        return v * 2.0
    return jnp.sum(bump(x)) * count + jnp.sum(bump(x)) * count


def through_a_middle_function(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    def twice(v):
        add(v)
        add(v * v)
    twice(x)
    twice(x)
    return jnp.sum(total)


def two_names(x):
    s, p = 0.0, 1.0

    def upd(v):
        nonlocal s, p
        s = s + v
        p = p * v
        return s
    a = upd(x)
    b = upd(x + 1)
    return jnp.sum(a + b + p + s)


def in_a_comprehension(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v
    ys = [add(x * k) for k in range(3)]
    return jnp.sum(total) + jnp.sum(ys[1])


@pytest.mark.parametrize("fn, expected", [
    (accumulate, [3.0, 3.0, 3.0]),
    (accumulate_in_a_loop, [0.0, 10.0, 20.0]),
    (accumulate_in_branches, [0.0, 8.0, 16.0]),
    (count_calls, [6.0, 6.0, 6.0]),
    (through_a_middle_function, [2.0, 6.0, 10.0]),
    (two_names, [6.0, 8.0, 10.0]),
    (in_a_comprehension, [4.0, 4.0, 4.0]),
])
def test_grad_and_jit_match_jax(fn, expected):
    np.testing.assert_allclose(np.asarray(redraft.grad(fn)(X)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.jit(redraft.grad(fn))(X)), expected,
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(redraft.jit(fn)(X)), np.asarray(fn(X)), rtol=1e-6)


def accumulate_in_a_static_branch(x):
    total = 0.0

    def add(v):
        nonlocal total
        total += v
    for i in range(2):
        if i == 1:
            add(x)
    return jnp.sum(total * x)


def test_a_branch_inside_a_loop_under_jit():
    assert float(redraft.jit(accumulate_in_a_static_branch)(X)) == 5.0


def accumulate_elementwise(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    add(x)
    add(jnp.sin(x))
    return total


def test_vmap():
    np.testing.assert_allclose(np.asarray(redraft.vmap(accumulate_elementwise)(X)),
                               [0.0, 1.8415, 2.9093], atol=1e-4)


def passed_to_scan(x):
    total = 0.0

    def step(c, v):
        nonlocal total
        total = total + v
        return c + v, v
    c, _ = lax.scan(step, 0.0, x)
    return c + total


def returned(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    return add


def passed_to_vmap(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v
    return redraft.vmap(add)(x)


def _line_of(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, use", [(passed_to_scan, "lax.scan(step"),
                                     (returned, "return add"),
                                     (passed_to_vmap, "redraft.vmap(add)")])
def test_used_as_a_value_is_refused_at_the_users_line(fn, use):
    with pytest.raises(UnsupportedSyntaxError, match="nonlocal 'total'") as info:
        redraft.jit(fn)(X)
    assert str(info.value).startswith(f"{__file__}:{_line_of(fn, use)}:")


def assigns_a_global(x):
    global X
    X = x
    return x


def test_assigning_a_global_is_still_refused():
    with pytest.raises(UnsupportedSyntaxError, match="global 'X'"):
        redraft.jit(assigns_a_global)(X)
