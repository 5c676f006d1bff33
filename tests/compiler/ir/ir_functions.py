"""Functions the pass tests compile (module level: redraft reads their source)."""
import redraft
import redraft.numpy as jnp


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def decay(x):
    for i in range(10):
        x -= 0.1 * x
    return x


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


sum_logistic_grad = redraft.grad(sum_logistic)


def grow_until_large(x):
    while jnp.sum(x) < 100.0:
        x = x * 2.0 + 1.0
    return x


def halve_until_small(x):
    n = 0
    while jnp.sum(x) > 1.0:
        x = x / 2
        n = n + 1
    return x, n


def branch_on_value(x):
    if x.sum() > 0:
        y = jnp.exp(x)
    else:
        y = x * 2.0
    return y


def loop_index_used(x):
    acc = jnp.zeros_like(x)
    for i in range(4):
        acc = acc + x * i
    return acc


def loop_over_rows(m):
    total = jnp.zeros(m.shape[1])
    for row in m:
        total = total + row * row
    return total


def nested_loops(x):
    for i in range(3):
        for j in range(2):
            x = x * 0.5 + 1.0
    return x


def shape_arithmetic(x):
    return x.reshape(jnp.array(x.shape).prod())


def constants(x):
    scale = jnp.arange(4.0) * 2.0 + 1.0
    return x * scale * 1.0


def repeated(x):
    return jnp.sin(x) * 2.0 + jnp.sin(x) * 2.0


def inner(x):
    return jnp.sin(x) * 2.0


def calls_inner(x):
    return inner(x) + inner(x * 2.0)


def mean_and_var(x):
    m = jnp.mean(x, axis=1)
    return m, jnp.mean(x * x, axis=1) - m * m


def softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def logsumexp(x):
    m = jnp.max(x)
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


def exp_and_sin(x):
    return jnp.exp(x), jnp.sin(x), jnp.sum(x), jnp.max(x)


def update_in_loop(x):
    y = x * 1.0 + 0.0
    for i in range(4):
        y = y.at[i].set(y[i] * 10.0)
    return y


def ints_and_bools(n, x):
    k = n * 3 + 1
    mask = (x > 0.5) & (x < 2.0)
    return jnp.where(mask, x * k, -x), k % 4


def mlp(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return {"h": h, "norm": jnp.sum(h * h)}


def prints(x):
    print(f"x = {x}")
    y = jnp.exp(x) * 2.0
    print(f"y = {y}")
    return y + 1.0


def keeps_param(x):
    y = x + 1.0
    return y, x


def swap_in_loop(a, b):
    for i in range(3):
        a, b = b * 2.0, a + 1.0
    return a, b


def loop_yields_outer(x, z):
    for i in range(3):
        x = z
        z = z * 1.5
    return x, z


def view_outlives_its_base(x):
    e = jnp.exp(x)
    r = e.reshape(2, 3).T
    s = jnp.sin(e)
    return r, s * 2.0


def view_in_loop(x):
    for i in range(3):
        y = jnp.exp(x)
        t = y.reshape(3, 2)
        x = jnp.sin(y) + t.reshape(6)
    return x


def loop_resets_to_outer(x, z):
    acc = jnp.zeros_like(x)
    for i in range(3):
        acc = jnp.exp(x) + acc * 0.5
        x = z
    return acc
