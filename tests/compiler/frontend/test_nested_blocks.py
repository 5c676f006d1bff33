"""Core keeps every update that nested blocks make (issue 8): a loop inside an `if` branch
that updates a name the branch rebound, a loop variable rebound in its own loop, `return`
inside loops. Each program is checked eagerly and under jit, jvp, grad and vmap against NumPy
and float64 central differences."""
import numpy as np

import redraft
import redraft.numpy as jnp
from redraft.test_util import numerical_grad as fd_grad


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def every_transform(f, f_np, x, batch, jit_grad=True):
    """f against f_np: eager, jit, grad, jit(grad), jvp, vmap, vmap(grad)."""
    close(f(x), f_np(x))
    close(redraft.jit(f)(x), f_np(x))
    g = fd_grad(f_np, x)
    close(redraft.grad(f)(x), g, rtol=1e-4, atol=1e-4)
    if jit_grad:
        close(redraft.jit(redraft.grad(f))(x), g, rtol=1e-4, atol=1e-4)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape).astype(np.float32)
    close(redraft.jvp(f, (x,), (v,))[1], np.sum(g * v), rtol=1e-4, atol=1e-4)
    close(redraft.vmap(f)(batch), [f_np(b) for b in batch], rtol=1e-5)
    close(redraft.vmap(redraft.grad(f))(batch), [fd_grad(f_np, b) for b in batch],
          rtol=1e-4, atol=1e-4)


X = np.array([0.5, -0.3, 0.8], np.float32)
BATCH = np.array([[0.5, -0.3, 0.8], [-0.9, -0.4, -0.1], [0.2, 0.1, -0.6]], np.float32)


# ---- a loop inside a branch updates the name the branch rebound ---------------------------------

def loop_in_branch(x):
    y = x * 1.0
    if jnp.sum(x) > 0:
        y = jnp.sin(x) * 2.0
        for i in range(3):
            y = y * 0.5 + x
    return jnp.sum(y ** 2)


def loop_in_branch_np(x):
    y = x * 1.0
    if np.sum(x) > 0:
        y = np.sin(x) * 2.0
        for i in range(3):
            y = y * 0.5 + x
    return np.sum(y ** 2)


def test_a_loop_in_a_branch_keeps_its_updates():
    every_transform(loop_in_branch, loop_in_branch_np, X, BATCH, jit_grad=False)


def test_jit_of_grad_of_a_loop_in_a_branch_on_a_value():
    close(redraft.jit(redraft.grad(loop_in_branch))(X), fd_grad(loop_in_branch_np, X),
          rtol=1e-4, atol=1e-4)


def loop_in_python_branch(x, c):
    y = x
    if c > 0:
        y = x * 2.0
        for i in range(3):
            y = y + 1.0
    return jnp.sum(y)


def test_a_loop_in_a_branch_on_a_python_value_keeps_its_updates():
    close(redraft.jit(loop_in_python_branch, static_argnums=1)(X, 1), np.sum(2 * X + 3))
    close(redraft.jvp(lambda x: loop_in_python_branch(x, 1), (X,), (X,))[1], np.sum(2 * X))
    close(redraft.vmap(loop_in_python_branch, in_axes=(0, None))(BATCH, 1),
          np.sum(2 * BATCH + 3, axis=1))


def while_counter_in_branch(x):
    y = jnp.sum(x)
    if y > 0:
        n = 0
        while n < 3:
            y = y * 1.5
            n = n + 1
    return y


def while_counter_in_branch_np(x):
    y = np.sum(x)
    if y > 0:
        y = y * 1.5 ** 3
    return y


def test_a_while_counter_in_a_branch_ends():
    """A lost counter update made the transformed loop run forever."""
    every_transform(while_counter_in_branch, while_counter_in_branch_np, X, BATCH,
                    jit_grad=False)


# ---- a loop variable rebound in its loop -----------------------------------------------------

def scale_rows(y):
    out = 0.0
    for row in y:
        row *= 2.0
        out = out + jnp.sum(jnp.sin(row) ** 2)
    return out


def scale_rows_np(y):
    return sum(np.sum(np.sin(2.0 * row) ** 2) for row in y)


def test_augmented_assignment_to_the_loop_variable():
    y = jnp.asarray(BATCH)  # a NumPy array would be scaled in place by `row *= 2.0`
    every_transform(scale_rows, scale_rows_np, y, np.stack([BATCH, BATCH[::-1]]))


def rebinds_its_index(x):
    total = 0.0
    for i in range(3):
        i = i * 2
        total = total + x[i % 3] * i
    return total


def test_rebinding_a_range_loop_index():
    every_transform(rebinds_its_index, lambda x: x[0] * 0 + x[2] * 2 + x[1] * 4, X, BATCH)


# ---- return inside loops -------------------------------------------------------------------------

def early_return(x):
    for i in range(5):
        x = x * 1.5
        if i == 2:
            return jnp.sum(x ** 2)
    return jnp.sum(x)


def test_return_from_a_for_loop():
    every_transform(early_return, lambda x: np.sum((x * 1.5 ** 3) ** 2), X, BATCH)


def return_on_a_value(x):
    s = jnp.sum(x ** 2)
    for i in range(5):
        s = s * 0.5
        if s < 0.1:
            return s
    return s * 3.0


def return_on_a_value_np(x):
    s = np.sum(x ** 2)
    for i in range(5):
        s = s * 0.5
        if s < 0.1:
            return s
    return s * 3.0


def test_return_from_a_loop_on_a_run_time_value():
    every_transform(return_on_a_value, return_on_a_value_np, X, BATCH)


def def_in_loop_body(x):
    acc = 0.0
    for i in range(3):
        def h(z):
            return jnp.sin(z) * i
        acc = acc + jnp.sum(h(x))
    return acc


def test_a_function_defined_in_a_loop_body_may_return():
    every_transform(def_in_loop_body, lambda x: 3.0 * np.sum(np.sin(x)), X, BATCH)


# ---- names set on one path of a branch --------------------------------------------------------

def set_on_one_path_then_merged(x):
    if jnp.tanh(x)[0] > 0.1:
        a = x
    if jnp.sum(x) > 0.0:
        a = x * 2.0
    a = jnp.sin(x)
    return jnp.sum(a)


def test_a_merge_never_reads_a_name_set_on_one_path():
    """The merge after the second `if` copied `a` on the path where no `a` was set: an
    UnboundLocalError from generated code for a program that reads only what it sets."""
    batch = np.array([[-0.5, -0.2, -0.1], [0.5, 0.2, -0.1], [-0.5, 0.9, 0.3]], np.float32)
    for x in batch:
        every_transform(set_on_one_path_then_merged, lambda x: np.sum(np.sin(x)), x, batch)


def rebinds_a_parameter_in_one_branch(x, w):
    if jnp.tanh(x)[0] > 0.1:
        c = (x + x)[0]  # noqa: F841 - dead names are part of the program
    if x[-1] > 0.1:
        g, x = (w + w), (x + jnp.sum(x) * 0.5)  # noqa: F841
        q = x  # noqa: F841
    else:
        r = ((x - x)[:, None] * x)  # noqa: F841
    return jnp.sum(x ** 2)


def rebinds_a_parameter_in_one_branch_np(x):
    if x[-1] > 0.1:
        x = x + np.sum(x) * 0.5
    return np.sum(x ** 2)


def test_a_copy_into_a_merged_name_keeps_the_other_merged_names():
    """Coalescing `q = x_2` retargeted x_2's definition to q, so x_2 (the merged x) was never
    set on that path."""
    batch = np.array([[0.5, 0.2, -0.1], [-0.5, 0.2, 0.3], [0.3, 0.4, 0.5]], np.float32)
    f = lambda x: rebinds_a_parameter_in_one_branch(x, x * 2.0)  # noqa: E731
    for x in batch:
        every_transform(f, rebinds_a_parameter_in_one_branch_np, x, batch)


def return_from_nested_loops(x):
    for i in range(3):
        for j in range(3):
            x = x + 0.1 * i
            if j == i:
                if i == 2:
                    return jnp.sum(x ** 2)
    return jnp.sum(x)


def test_return_from_nested_loops_under_jit_jvp_and_vmap():
    """Each branch of the return flags' ifs makes its own `range(3)`: equal values, which
    staging must see as one (it called them different Python values)."""
    x = X
    expected = np.sum((x + 0.9) ** 2)
    close(return_from_nested_loops(x), expected)
    close(redraft.jit(return_from_nested_loops)(x), expected)
    close(redraft.jvp(return_from_nested_loops, (x,), (x,))[1], np.sum(2 * (x + 0.9) * x),
          rtol=1e-4)
    close(redraft.vmap(return_from_nested_loops)(BATCH),
          [np.sum((b + 0.9) ** 2) for b in BATCH], rtol=1e-5)


def loop_variable_reused_in_a_loop_with_break(x):
    for k in range(2):
        x = x * 1.0
    n = 0
    while n < 2:
        if n == 1:
            break
        for k in range(2):
            x = x * 1.5
        n += 1
    return jnp.sum(x)


def test_a_loop_variable_nothing_reads_is_not_merged():
    """Core merged `k` (two loops' variable) through the while loop's branches; the reverse
    pass then saved the inner loop's version before the loop had set it."""
    every_transform(loop_variable_reused_in_a_loop_with_break,
                    lambda x: np.sum(x * 2.25), X, BATCH)
