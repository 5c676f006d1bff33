"""redraft.debug.print: eager, compiled (prints each run's values), under grad and vmap."""
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
