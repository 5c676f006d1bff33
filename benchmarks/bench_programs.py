"""Fifteen small jitted programs of the kinds JAX users write, redraft against JAX.

    python -m benchmarks.bench_programs [--cpu] [--site DIR] [--only NAME ...]

Each program is written once against a JAX-like namespace (`jax`, `jnp`, `lax`, `nn`,
`random`) and built twice, on redraft and on JAX: an attention block and its gradient, a
cross-entropy with integer labels (a gather), an embedding bag (gather, scatter-add), a scan
RNN, an n-body loop, Gaussian-process regression (cholesky), a CNN and a depthwise CNN with
pooling, a spectral heat equation (ffts in a loop), per-example gradients, Adam over a dict
by tree_map, top-k and median (sorting), sampling inside jit, and a Newton while loop.
Values are checked against JAX's before timing; times are medians of rounds in alternation
(benchmarks/common.py), wall clock by default, CPU seconds of all threads with --cpu.
Without JAX importable only redraft's times are printed.
"""
from __future__ import annotations

import argparse
import site
import time

import numpy as np

from benchmarks.common import compare_rounds, format_seconds, median


def build(jax, jnp, lax, nn, random) -> dict:
    """name -> (function, arguments), on the namespace given."""
    rng = np.random.default_rng(0)

    def f32(*shape):
        return jnp.asarray(rng.standard_normal(shape).astype(np.float32))

    def attention(params, x):
        wq, wk, wv, wo = params
        h = (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)
        q, k, v = h @ wq, h @ wk, h @ wv
        scores = q @ k.T / np.sqrt(q.shape[-1])
        causal = jnp.tril(jnp.ones((x.shape[0], x.shape[0]), bool))
        return x + nn.softmax(jnp.where(causal, scores, -1e9), -1) @ v @ wo

    def cross_entropy(params, x, y):
        w1, b1, w2, b2 = params
        logits = jnp.tanh(x @ w1 + b1) @ w2 + b2
        logp = logits - nn.logsumexp(logits, axis=1, keepdims=True)
        return -jnp.mean(logp[jnp.arange(x.shape[0]), y])

    def embedding_bag(table, ids):
        return jnp.sum(jnp.tanh(table[ids].mean(1)))

    def rnn(w, xs):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()
        return lax.scan(step, jnp.zeros(w.shape[0]), xs)[1].sum()

    def nbody(pos, vel):
        def body(i, state):
            p, v = state
            d = p[:, None, :] - p[None, :, :]
            r2 = jnp.sum(d * d, -1) + 0.01
            v = v - 0.001 * jnp.sum(d / r2[..., None] ** 1.5, 1)
            return p + 0.001 * v, v
        return lax.fori_loop(0, 20, body, (pos, vel))

    def gp(lengthscale, x, y):
        d2 = jnp.sum((x[:, None] - x[None]) ** 2, -1)
        kernel = jnp.exp(-0.5 * d2 / lengthscale ** 2) + 0.1 * jnp.eye(x.shape[0])
        chol = jnp.linalg.cholesky(kernel)
        alpha = jax.scipy.linalg.cho_solve((chol, True), y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(chol)))

    def cnn(kernel, images):
        y = lax.conv_general_dilated(images, kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = lax.reduce_window(nn.relu(y), -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                              "VALID")
        return jnp.mean(y ** 2)

    def depthwise(kernel, images):
        y = lax.conv_general_dilated(images, kernel, (1, 1), "SAME",
                                     feature_group_count=images.shape[-1],
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.mean(nn.relu(y) ** 2)

    def heat(u):
        k = jnp.fft.rfftfreq(u.shape[0]) * 2 * np.pi

        def body(i, u):
            return jnp.fft.irfft(jnp.fft.rfft(u) * jnp.exp(-k ** 2 * 0.1), n=u.shape[0])
        return lax.fori_loop(0, 20, body, u)

    def mlp_loss(p, x, y):
        return jnp.sum((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2)

    def adam(p, g, m, v):
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        p = jax.tree_util.tree_map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8),
                                   p, m, v)
        return p, m, v

    def order_statistics(x):
        return lax.top_k(x, 5)[0].sum() + jnp.median(x, axis=1).sum()

    def sample(key, mu):
        k1, k2 = random.split(key)
        keep = random.bernoulli(k2, 0.9, mu.shape)
        return jnp.where(keep, mu + random.normal(k1, mu.shape), 0.0).sum()

    def newton(a):
        def cond(c):
            return jnp.max(jnp.abs(c[0] * c[0] - a)) > 1e-5

        def body(c):
            return 0.5 * (c[0] + a / c[0]), c[1] + 1
        return lax.while_loop(cond, body, (a, 0))

    tree = {f"w{i}": f32(256, 256) for i in range(4)}
    squares = {k: jnp.abs(w) for k, w in tree.items()}
    heads = [f32(64, 64) * 0.1 for _ in range(4)]
    return {
        "attention": (attention, (heads, f32(128, 64))),
        "attention grad": (jax.grad(lambda p, x: jnp.sum(attention(p, x) ** 2)),
                           (heads, f32(128, 64))),
        "cross-entropy grad": (jax.grad(cross_entropy), (
            [f32(100, 256) * 0.1, f32(256) * 0, f32(256, 10) * 0.1, f32(10) * 0],
            f32(64, 100), jnp.asarray(rng.integers(0, 10, 64).astype(np.int32)))),
        "embedding grad": (jax.grad(embedding_bag), (
            f32(5000, 64), jnp.asarray(rng.integers(0, 5000, (32, 20)).astype(np.int32)))),
        "rnn scan grad": (jax.grad(rnn), (f32(64, 64) * 0.1, f32(50, 64))),
        "n-body 20 steps": (nbody, (f32(64, 3), f32(64, 3))),
        "gp grad": (jax.grad(gp), (jnp.asarray(1.0), f32(100, 2), f32(100))),
        "cnn grad": (jax.grad(cnn), (f32(3, 3, 3, 16) * 0.1, f32(16, 28, 28, 3))),
        "depthwise grad": (jax.grad(depthwise), (f32(3, 3, 1, 16) * 0.1, f32(8, 28, 28, 16))),
        "fft heat 20 steps": (heat, (f32(1024),)),
        "per-example grads": (jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0)), (
            [f32(32, 64) * 0.1, f32(64, 4) * 0.1], f32(128, 32), f32(128, 4))),
        "adam tree_map": (adam, (tree, tree, tree, squares)),
        "top_k + median": (order_statistics, (f32(256, 128),)),
        "sampling in jit": (sample, (random.PRNGKey(0), f32(256, 256))),
        "newton while": (newton, (jnp.abs(f32(1000)) + 1,)),
    }


def _namespace(module):
    import importlib
    jax = importlib.import_module(module)
    importlib.import_module(f"{module}.scipy.linalg")
    return jax, jax.numpy, jax.lax, jax.nn, jax.random


def _leaves(jax, tree) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(tree)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="CPU seconds instead of wall")
    parser.add_argument("--site", help="a site-packages directory to add (JAX)")
    parser.add_argument("--only", nargs="*", default=None, help="program names")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if args.site:
        site.addsitedir(args.site)
    ours = build(*_namespace("redraft"))
    try:
        theirs = build(*_namespace("jax"))
        jax = __import__("jax")
    except ImportError:
        theirs, jax = None, None
    rd = __import__("redraft")
    clock = time.process_time if args.cpu else None
    print(f"{'program':<20} {'redraft':>10} {'jax':>10} {'ratio':>7}")
    for name, (fn, fargs) in ours.items():
        if args.only and name not in args.only:
            continue
        ours_jit = rd.jit(fn)
        want = _leaves(rd, ours_jit(*fargs))
        statements = {"ours": "f(*a)"}
        namespace = {"f": ours_jit, "a": fargs}
        if theirs is not None:
            their_fn, their_args = theirs[name]
            their_jit = jax.jit(their_fn)
            got = _leaves(jax, their_jit(*their_args))
            for g, w in zip(got, want):
                np.testing.assert_allclose(w, g, rtol=2e-4, atol=2e-4, equal_nan=True,
                                           err_msg=f"{name}: redraft and JAX disagree")
            statements["jax"] = "jax.block_until_ready(g(*b))"
            namespace.update(g=their_jit, b=their_args, jax=jax)
        rounds = compare_rounds(statements, namespace, repeat=args.rounds, clock=clock)
        t_ours = median(rounds["ours"])
        t_jax = median(rounds["jax"]) if "jax" in rounds else None
        ratio = f"{t_ours / t_jax:6.2f}x" if t_jax else "-"
        print(f"{name:<20} {format_seconds(t_ours):>10} {format_seconds(t_jax):>10} {ratio:>7}",
              flush=True)
    print("medians of rounds timed in alternation; ratio below 1: redraft is faster.")
    print("times are " + ("CPU seconds of the whole process." if args.cpu else "wall clock."))


if __name__ == "__main__":
    main()
