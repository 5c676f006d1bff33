"""Functions the jit tests compile (module level: redraft reads their source)."""
import redraft.numpy as jnp
from redraft import lax


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def decay(x):
    for i in range(10):
        x -= 0.1 * x
    return x


def halve_until_small(x):
    n = 0
    while jnp.sum(x) > 1.0:
        x = x / 2
        n = n + 1
    return x, n


def sign_branch(x, neg):
    return -x if neg else x


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


def shape_arithmetic(x):
    return x.reshape(jnp.array(x.shape).prod())


def pytree_in_out(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return {"h": h, "norm": jnp.sum(h * h)}


def prints(x, y):
    print("Running f():")
    print(f"  x = {x}")
    result = jnp.dot(x + 1, y + 1)
    print(f"  result = {result:}")
    return result


def get_negatives(x):
    return x[x < 0]


def inner(x):
    return jnp.sin(x) * 2.0


def calls_inner(x):
    return inner(x) + inner(x * 2.0)


def fori(x):
    def body(i, v):
        return v * 0.5 + i
    return lax.fori_loop(0, 5, body, x)


def static_power(x, n):
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))
