"""Liveness of Core (compiler/core/liveness.py): which names a branch leaves live and which a
loop's head holds live, the facts SSA conversion merges and carries by."""
import numpy as np

import redraft.numpy as jnp
from redraft.compiler.core import ir
from redraft.compiler.core.loader import load
from redraft.compiler.core.liveness import liveness
from redraft.compiler.frontend.normalize import lower_function
from redraft.compiler.frontend.ssa import to_ssa


def dead_in_loop(x, w):
    pair = (w, x)
    for i in range(3):
        if i > 0:
            pair = (x, x)
            a, b = pair
            x = a + b
        w = w * 0.5
    return jnp.sum(w) + jnp.sum(x)


def read_next_iteration(x):
    y = x
    z = x
    t = 0
    while t < 3:
        x = x + y
        y = x * 0.5
        z = x  # noqa: F841 - dead on purpose: nothing reads it
        t += 1
    return x


def _first(body, kind):
    return next(s for s in ir.walk_stmts(body) if isinstance(s, kind))


def test_a_name_written_before_read_in_every_iteration_is_dead_at_the_head():
    core = lower_function(dead_in_loop)
    info = liveness(core.body)
    loop, branch = _first(core.body, ir.For), _first(core.body, ir.If)
    assert {"x", "w"} <= info.live_at_head(loop)
    assert "pair" not in info.live_at_head(loop) and "pair" not in info.live_after(loop)
    assert "pair" not in info.live_after(branch) and "x" in info.live_after(branch)


def test_a_while_head_holds_what_the_next_iteration_reads():
    core = lower_function(read_next_iteration)
    info = liveness(core.body)
    loop = _first(core.body, ir.While)
    assert {"x", "y", "t"} <= info.live_at_head(loop)
    assert "z" not in info.live_at_head(loop)


def test_ssa_carries_and_merges_only_live_names():
    core = to_ssa(lower_function(dead_in_loop))
    k = next(k for k, s in enumerate(core.body) if isinstance(s, ir.For))
    loop = core.body[k]
    entry_copies = {s.expr.name for s in core.body[:k]
                    if isinstance(s, ir.Assign) and isinstance(s.expr, ir.Var)}
    assert entry_copies == {"x", "w"}, "pair is dead at the head: not carried"
    branch = _first(loop.body, ir.If)
    assert not any(n.startswith("pair") for n in ir.block_writes(branch.orelse))
    x, w = np.array([0.5, -1.0, 2.0], np.float32), np.eye(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(load(core)(jnp.asarray(x), jnp.asarray(w))),
                               np.asarray(dead_in_loop(jnp.asarray(x), jnp.asarray(w))))
