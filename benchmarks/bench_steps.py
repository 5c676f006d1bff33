"""Real training steps, compiled redraft against NumPy (gradients by hand) and JAX.

    python -m benchmarks.bench_steps [--quick] [--cpu] [--site DIR] [--only NAME]

The steps: JAX's MNIST example update (784-1024-1024-10 MLP, batch 128, tanh, logsumexp,
SGD over a list of (W, b) tuples); a small CNN step (3x3 conv + relu + 2x2 max-pool + dense,
batch 32); per-example gradients of a logistic regression with vmap; an RNN step (a tanh RNN
run by lax.scan, with its gradient). Each is one `jit` of the whole step; NumPy computes the
same numbers with the gradient written out by hand. Steady-state figures are medians of
rounds timed in alternation (benchmarks/common.py), with the ratio of the best rounds beside
(on a loaded machine the best round rewards whichever implementation varies most);
first-call figures include compilation. NumPy's BLAS runs on one thread
(OPENBLAS_NUM_THREADS=1 unless set: see below).
--site adds a site-packages directory (run with /tmp/jaxenv/bin/python to have JAX too).
"""
from __future__ import annotations

import argparse
import os
import site
import sys
import time

# OpenBLAS's threads spin for a while after each product. On this 2-core machine they then
# hold the cores that redraft's and XLA's threads need in the next round (NumPy's own MLP
# step took 171 ms with them, 11 ms without, and redraft's 12 ms instead of 7), so NumPy
# runs on one thread unless the caller says otherwise. Set before NumPy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

STEP = 0.01


# ---- MNIST MLP -----------------------------------------------------------------------------

def rd_mlp_predict(params, inputs):
    import redraft.numpy as jnp
    from redraft.scipy.special import logsumexp
    activations = inputs
    for w, b in params[:-1]:
        activations = jnp.tanh(jnp.dot(activations, w) + b)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def rd_mlp_loss(params, inputs, targets):
    import redraft.numpy as jnp
    preds = rd_mlp_predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def rd_mlp_update(params, inputs, targets):
    import redraft
    grads = redraft.grad(rd_mlp_loss)(params, inputs, targets)
    return [(w - 0.01 * dw, b - 0.01 * db) for (w, b), (dw, db) in zip(params, grads)]


def jax_mlp_update(jax):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def predict(params, inputs):
        activations = inputs
        for w, b in params[:-1]:
            activations = jnp.tanh(jnp.dot(activations, w) + b)
        final_w, final_b = params[-1]
        logits = jnp.dot(activations, final_w) + final_b
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def loss(params, inputs, targets):
        return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))

    def update(params, inputs, targets):
        grads = jax.grad(loss)(params, inputs, targets)
        return [(w - STEP * dw, b - STEP * db) for (w, b), (dw, db) in zip(params, grads)]

    return update


def np_mlp_update(params, inputs, targets):
    """The MLP update with its backward pass written out."""
    acts = [inputs]
    for w, b in params[:-1]:
        acts.append(np.tanh(acts[-1] @ w + b))
    w_out, b_out = params[-1]
    logits = acts[-1] @ w_out + b_out
    shifted = logits - logits.max(1, keepdims=True)
    soft = np.exp(shifted)
    soft /= soft.sum(1, keepdims=True)
    g = (soft * targets.sum(1, keepdims=True) - targets) / inputs.shape[0]
    out = []
    for layer in range(len(params) - 1, -1, -1):
        w, b = params[layer]
        gw, gb = acts[layer].T @ g, g.sum(0)
        if layer:
            g = (g @ w.T) * (1.0 - acts[layer] * acts[layer])
        out.append((w - STEP * gw, b - STEP * gb))
    return out[::-1]


def mlp_data(rng):
    sizes = [784, 1024, 1024, 10]
    params = [(rng.standard_normal((m, n), dtype=np.float32) * 0.05,
               rng.standard_normal(n, dtype=np.float32) * 0.05)
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, y


# ---- small CNN -----------------------------------------------------------------------------

def rd_cnn_loss(params, images, targets):
    import redraft.numpy as jnp
    from redraft import lax
    from redraft.scipy.special import logsumexp
    kernel, bias, w, b = params
    h = lax.conv_general_dilated(images, kernel, (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jnp.maximum(h + bias, 0.0)
    n, height, width, c = h.shape
    h = h.reshape(n, height // 2, 2, width // 2, 2, c).max(axis=(2, 4))
    logits = jnp.dot(h.reshape(n, -1), w) + b
    preds = logits - logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def rd_cnn_update(params, images, targets):
    import redraft
    grads = redraft.grad(rd_cnn_loss)(params, images, targets)
    return [p - 0.01 * g for p, g in zip(params, grads)]


def jax_cnn_update(jax):
    import jax.numpy as jnp
    from jax import lax
    from jax.scipy.special import logsumexp

    def loss(params, images, targets):
        kernel, bias, w, b = params
        h = lax.conv_general_dilated(images, kernel, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jnp.maximum(h + bias, 0.0)
        n, height, width, c = h.shape
        h = h.reshape(n, height // 2, 2, width // 2, 2, c).max(axis=(2, 4))
        logits = jnp.dot(h.reshape(n, -1), w) + b
        preds = logits - logsumexp(logits, axis=1, keepdims=True)
        return -jnp.mean(jnp.sum(preds * targets, axis=1))

    def update(params, images, targets):
        grads = jax.grad(loss)(params, images, targets)
        return [p - STEP * g for p, g in zip(params, grads)]

    return update


def _np_patches(images, size):
    """(N, H, W, size*size*C) 'SAME' patches of NHWC images, in HWI order."""
    pad = size // 2
    padded = np.pad(images, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    n, h, w, c = images.shape
    cols = [padded[:, i:i + h, j:j + w, :] for i in range(size) for j in range(size)]
    return np.concatenate(cols, axis=3)


def np_cnn_update(params, images, targets):
    """The CNN step by hand: im2col conv, relu, 2x2 max-pool, dense, softmax cross-entropy."""
    kernel, bias, w, b = params
    size, _, cin, cout = kernel.shape
    n, height, width, _ = images.shape
    patches = _np_patches(images, size).reshape(-1, size * size * cin)
    pre = (patches @ kernel.reshape(-1, cout)).reshape(n, height, width, cout) + bias
    act = np.maximum(pre, 0.0)
    blocks = act.reshape(n, height // 2, 2, width // 2, 2, cout)
    pooled = blocks.max(axis=(2, 4))
    flat = pooled.reshape(n, -1)
    logits = flat @ w + b
    soft = np.exp(logits - logits.max(1, keepdims=True))
    soft /= soft.sum(1, keepdims=True)
    g = (soft * targets.sum(1, keepdims=True) - targets) / n
    gw, gb = flat.T @ g, g.sum(0)
    g_pooled = (g @ w.T).reshape(pooled.shape)
    # ties inside a block occur only among relu's zeros, where g_pre is zero anyway
    winner = blocks == pooled[:, :, None, :, None, :]
    g_act = (winner * g_pooled[:, :, None, :, None, :]).reshape(act.shape)
    g_pre = g_act * (pre > 0)
    g_kernel = (patches.T @ g_pre.reshape(-1, cout)).reshape(kernel.shape)
    g_bias = g_pre.sum((0, 1, 2))
    grads = (g_kernel, g_bias, gw, gb)
    return [p - STEP * gp for p, gp in zip(params, grads)]


def cnn_data(rng):
    params = [rng.standard_normal((3, 3, 1, 16), dtype=np.float32) * 0.3,
              np.zeros(16, np.float32),
              rng.standard_normal((14 * 14 * 16, 10), dtype=np.float32) * 0.02,
              np.zeros(10, np.float32)]
    x = rng.standard_normal((32, 28, 28, 1), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    return params, x, y


# ---- per-example gradients of a logistic regression ----------------------------------------

def rd_logistic_loss(w, x, y):
    import redraft.numpy as jnp
    z = jnp.dot(x, w)
    return jnp.logaddexp(0.0, z) - y * z


def rd_per_example(w, xs, ys):
    import redraft
    return redraft.vmap(redraft.grad(rd_logistic_loss), in_axes=(None, 0, 0))(w, xs, ys)


def jax_per_example(jax):
    import jax.numpy as jnp

    def loss(w, x, y):
        z = jnp.dot(x, w)
        return jnp.logaddexp(0.0, z) - y * z

    return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))


def np_per_example(w, xs, ys):
    z = xs @ w
    s = 1.0 / (1.0 + np.exp(-z))
    return (s - ys)[:, None] * xs


def logistic_data(rng):
    w = rng.standard_normal(256, dtype=np.float32) * 0.1
    xs = rng.standard_normal((512, 256), dtype=np.float32)
    ys = (rng.random(512) < 0.5).astype(np.float32)
    return w, xs, ys


# ---- RNN step through scan -----------------------------------------------------------------

def rd_rnn_loss(params, xs, target):
    import redraft.numpy as jnp
    from redraft import lax
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(jnp.dot(x, wx) + jnp.dot(h, wh) + b)
        return h, h

    h0 = jnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    h, _ = lax.scan(cell, h0, xs)
    return jnp.mean((h - target) ** 2)


def rd_rnn_update(params, xs, target):
    import redraft
    grads = redraft.grad(rd_rnn_loss)(params, xs, target)
    return [p - 0.01 * g for p, g in zip(params, grads)]


def jax_rnn_update(jax):
    import jax.numpy as jnp
    from jax import lax

    def loss(params, xs, target):
        wx, wh, b = params

        def cell(h, x):
            h = jnp.tanh(jnp.dot(x, wx) + jnp.dot(h, wh) + b)
            return h, h

        h0 = jnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
        h, _ = lax.scan(cell, h0, xs)
        return jnp.mean((h - target) ** 2)

    def update(params, xs, target):
        grads = jax.grad(loss)(params, xs, target)
        return [p - STEP * g for p, g in zip(params, grads)]

    return update


def np_rnn_update(params, xs, target):
    """Forward through time keeping every state, then backpropagation through time."""
    wx, wh, b = params
    hs = [np.zeros((xs.shape[1], wh.shape[0]), xs.dtype)]
    for x in xs:
        hs.append(np.tanh(x @ wx + hs[-1] @ wh + b))
    g = 2.0 * (hs[-1] - target) / target.size
    gwx, gwh, gb = np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
    for t in range(len(xs) - 1, -1, -1):
        g_pre = g * (1.0 - hs[t + 1] * hs[t + 1])
        gwx += xs[t].T @ g_pre
        gwh += hs[t].T @ g_pre
        gb += g_pre.sum(0)
        g = g_pre @ wh.T
    return [wx - STEP * gwx, wh - STEP * gwh, b - STEP * gb]


def rnn_data(rng):
    params = [rng.standard_normal((64, 128), dtype=np.float32) * 0.1,
              rng.standard_normal((128, 128), dtype=np.float32) * 0.1,
              np.zeros(128, np.float32)]
    xs = rng.standard_normal((50, 32, 64), dtype=np.float32)
    target = rng.standard_normal((32, 128), dtype=np.float32) * 0.5
    return params, xs, target


# ---- the table -----------------------------------------------------------------------------

WORKLOADS = {
    "mlp update": (mlp_data, rd_mlp_update, jax_mlp_update, np_mlp_update),
    "cnn update": (cnn_data, rd_cnn_update, jax_cnn_update, np_cnn_update),
    "per-example grads": (logistic_data, rd_per_example, jax_per_example, np_per_example),
    "rnn scan update": (rnn_data, rd_rnn_update, jax_rnn_update, np_rnn_update),
}


def _tree(convert, args):
    if isinstance(args, (list, tuple)):
        return type(args)(_tree(convert, a) for a in args)
    return convert(args)


def _leaves(tree) -> list[np.ndarray]:
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [np.asarray(tree)]


def _check(name: str, reference, other, who: str) -> None:
    """Refuse to time a step whose numbers disagree with NumPy's."""
    for r, o in zip(_leaves(reference), _leaves(other), strict=True):
        if not np.allclose(r, o, rtol=2e-3, atol=2e-4):
            raise AssertionError(f"{name}: {who} disagrees with NumPy "
                                 f"(max error {np.max(np.abs(r - o)):.3g})")


def _first_call(fn, args, block) -> tuple[float, object]:
    start = time.perf_counter()
    out = block(fn(*args))
    return time.perf_counter() - start, out


def settle() -> None:
    """Wait for redraft's background saves to the persistent cache: the save after a first
    call (object code and a link, hundreds of ms of CPU on another thread) would otherwise
    run during the timed rounds and count in their CPU seconds (the MLP step measured 12
    ms instead of 7.6, NumPy's 23 instead of 12)."""
    from redraft.compiler.cache import jit_cache
    jit_cache.flush()


def run(names: list[str], repeat: int, jax, clock=None) -> list[dict]:
    import redraft
    import redraft.numpy as rnp
    from benchmarks.common import compare_rounds, median
    rows = []
    for name in names:
        make_data, rd_fn, jax_maker, np_fn = WORKLOADS[name]
        data = make_data(np.random.default_rng(0))
        ns = {"np_fn": np_fn, "np_args": data}
        stmts = {"numpy": "np_fn(*np_args)"}
        reference = np_fn(*data)
        row = {"name": name}
        rd_args = _tree(rnp.asarray, data)
        ours = redraft.jit(rd_fn)
        row["ours first"], out = _first_call(ours, rd_args, lambda x: x)
        _check(name, reference, out, "redraft")
        ns.update(ours=ours, rd_args=rd_args)
        stmts["ours"] = "ours(*rd_args)"
        if jax is not None:
            theirs = jax.jit(jax_maker(jax))
            j_args = _tree(jax.numpy.asarray, data)
            row["jax first"], out = _first_call(theirs, j_args, jax.block_until_ready)
            _check(name, reference, out, "JAX")
            ns.update(theirs=theirs, j_args=j_args, jax=jax)
            stmts["jax"] = "jax.block_until_ready(theirs(*j_args))"
        settle()
        for key, times in compare_rounds(stmts, ns, repeat=repeat, min_seconds=0.05,
                                          clock=clock).items():
            row[key], row[f"{key} best"] = median(times), min(times)
        rows.append(row)
        print(f"  {name}: done", file=sys.stderr)
    return rows


def print_rows(rows: list[dict], with_jax: bool) -> None:
    from benchmarks.common import format_seconds as fmt
    header = f"{'step':<18}  {'ours':>9}  {'numpy':>9}"
    if with_jax:
        header += f"  {'jax':>9}  {'ours/jax':>8}  {'best o/j':>8}"
    header += f"  {'ours/np':>8}  {'1st call':>9}"
    if with_jax:
        header += f"  {'jax 1st':>9}"
    print(header)
    print("-" * len(header))
    for r in rows:
        line = f"{r['name']:<18}  {fmt(r['ours']):>9}  {fmt(r['numpy']):>9}"
        if with_jax:
            line += f"  {fmt(r['jax']):>9}  {r['ours'] / r['jax']:7.2f}x"
            line += f"  {r['ours best'] / r['jax best']:7.2f}x"
        line += f"  {r['ours'] / r['numpy']:7.2f}x  {fmt(r['ours first']):>9}"
        if with_jax:
            line += f"  {fmt(r['jax first']):>9}"
        print(line)
    print("medians of rounds timed in alternation; 'best o/j' compares the best rounds.")
    print("ratios are time / time: below 1 means redraft is faster.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--site", default=None, help="add this site-packages directory")
    parser.add_argument("--only", action="append", choices=sorted(WORKLOADS),
                        help="run only this step (repeatable)")
    parser.add_argument("--cpu", action="store_true",
                        help="time CPU seconds of the process (all threads) instead of the "
                        "wall clock: steadier on a loaded machine; with REDRAFT_NUM_THREADS=1 "
                        "it compares one core's work")
    args = parser.parse_args(argv)
    if args.site:
        site.addsitedir(args.site)
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        jax = None
    rows = run(args.only or list(WORKLOADS), 5 if args.quick else 15, jax,
               time.process_time if args.cpu else None)
    print_rows(rows, jax is not None)
    if args.cpu:
        print("step times are CPU seconds of the whole process (all threads).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
