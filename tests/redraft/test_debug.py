"""redraft.debug.print: eager, compiled (prints each run's values), under grad and vmap."""
import logging
import pdb

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import debug


def shout(x):
    debug.print("x={} total={t:.1f}", x, t=jnp.sum(x))
    return jnp.sum(jnp.sin(x))


def test_eager_print(capsys):
    shout(jnp.arange(3.0))
    assert capsys.readouterr().out == "x=[0. 1. 2.] total=3.0\n"


def test_compiled_print_shows_each_runs_values(capfd):
    f = redraft.jit(shout)
    f(jnp.arange(3.0))
    f(jnp.ones(3))
    out = capfd.readouterr().out
    assert "x=[0. 1. 2.] total=3.0" in out and "x=[1. 1. 1.] total=3.0" in out


def test_print_under_grad_and_vmap(capsys):
    g = redraft.grad(shout)(jnp.zeros(2))
    assert [float(v) for v in g] == [1.0, 1.0]
    assert "x=[0. 0.]" in capsys.readouterr().out
    redraft.vmap(shout)(jnp.ones((2, 3)))
    assert capsys.readouterr().out.count("x=[1. 1. 1.]") == 2


def test_callback_runs_eagerly():
    seen = []
    debug.callback(seen.append, 3)
    assert seen == [3]


SEEN = []


def _record(v, scale=None):
    SEEN.append((np.asarray(v).tolist(), scale))


def _calls_back(x):
    debug.callback(_record, x * 2, scale=3)
    return jnp.sum(x)


def test_callback_in_compiled_code_sees_each_runs_values():
    SEEN.clear()
    f = redraft.jit(_calls_back)
    f(jnp.arange(3.0))
    f(jnp.ones(2))
    assert SEEN == [([0.0, 2.0, 4.0], 3), ([2.0, 2.0], 3)]


def test_callback_under_vmap_and_grad():
    SEEN.clear()
    redraft.vmap(_calls_back)(jnp.arange(4.0).reshape(2, 2))
    assert SEEN == [([0.0, 2.0], 3), ([4.0, 6.0], 3)]
    SEEN.clear()
    assert redraft.grad(_calls_back)(jnp.ones(2)).tolist() == [1.0, 1.0]
    assert SEEN == [([2.0, 2.0], 3)]


def _logs(x):
    debug.log("x is {}", x)
    return x + 1


def test_log_goes_to_the_logger_eagerly_and_compiled(caplog):
    with caplog.at_level(logging.INFO, logger="redraft.debug"):
        _logs(jnp.ones(2))
        redraft.jit(_logs)(jnp.zeros(2))
    assert [r.getMessage() for r in caplog.records] == ["x is [1. 1.]", "x is [0. 0.]"]


def test_breakpoint_stops_in_the_callers_frame(monkeypatch):
    frames = []
    monkeypatch.setattr(pdb.Pdb, "set_trace", lambda self, frame=None: frames.append(frame))
    marker = jnp.ones(1)
    debug.breakpoint()
    assert frames and frames[0].f_locals["marker"] is marker


def _stops(x):
    debug.breakpoint()
    return x


def test_breakpoint_under_jit_says_why_not():
    with pytest.raises(NotImplementedError, match="no Python frame"):
        redraft.jit(_stops)(jnp.ones(2))


def test_sharding_inspection_on_one_device(capsys):
    found = []
    debug.inspect_array_sharding({"a": jnp.ones(3)}, callback=found.append)
    assert found == [debug.SingleDeviceSharding(redraft.devices()[0])]
    assert found[0].is_fully_replicated and found[0].shard_shape((3,)) == (3,)
    debug.visualize_array_sharding(jnp.ones((2, 2)))
    out = capsys.readouterr().out
    assert "CPU 0" in out and out.count("\n") == 3
    with pytest.raises(ValueError, match="rank at most 2"):
        debug.visualize_sharding((1, 2, 3), found[0])


def test_effect_kinds():
    assert debug.effect_of(True) is debug.OrderedDebugEffect
    assert issubclass(debug.OrderedDebugEffect, debug.DebugEffect)
