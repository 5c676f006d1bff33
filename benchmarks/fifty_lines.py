"""A 50-line function for benchmarks/bench_ad.py: an MLP loss with extras."""
import redraft.numpy as jnp



def mlp_loss(W1, b1, W2, b2, x, y):
    """A 50-line function: two-layer MLP, softmax cross-entropy, L2 and a few extras."""
    h = x @ W1 + b1
    h = jnp.tanh(h)
    h2 = h * h
    h = h + 0.1 * h2
    logits = h @ W2 + b2
    m = jnp.max(logits, axis=1, keepdims=True)
    z = logits - m
    e = jnp.exp(z)
    s = jnp.sum(e, axis=1, keepdims=True)
    logp = z - jnp.log(s)
    nll = -jnp.sum(logp * y, axis=1)
    loss = jnp.mean(nll)
    l2 = jnp.sum(W1 * W1) + jnp.sum(W2 * W2)
    loss = loss + 1e-3 * l2
    a = jnp.sin(loss)
    b = jnp.cos(loss)
    c = a * a + b * b
    loss = loss * c
    d = jnp.sqrt(1.0 + loss * loss)
    loss = loss + 0.01 * d
    f = jnp.exp(-loss)
    g = jnp.log1p(f)
    loss = loss + 0.001 * g
    k = jnp.abs(b1).sum()
    k2 = jnp.abs(b2).sum()
    loss = loss + 1e-4 * (k + k2)
    p = jnp.tanh(loss)
    q = p * 2.0 - 1.0
    r = q * q
    loss = loss + 1e-5 * r
    t = jnp.maximum(loss, 0.0)
    u = jnp.minimum(t, 100.0)
    loss = u + 0.0 * t
    v = jnp.sum(h, axis=0)
    w = jnp.mean(v * v)
    loss = loss + 1e-6 * w
    aa = jnp.exp(-w)
    bb = aa / (1.0 + aa)
    loss = loss + 1e-7 * bb
    cc = jnp.sum(logits ** 2)
    dd = jnp.sqrt(cc + 1.0)
    loss = loss + 1e-8 * dd
    ee = loss * 1.0
    if ee > 1e6:
        ee = ee / 2.0
    return ee
