"""jnp.frompyfunc / jnp.ufunc and their methods against JAX 0.10.2's results (stored here):
eager, compiled, batched and differentiated."""
import operator

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp


def logaddexp(x, y):
    return jnp.maximum(x, y) + jnp.log1p(jnp.exp(-jnp.abs(x - y)))


LAE = jnp.frompyfunc(logaddexp, nin=2, nout=1, identity=-np.inf)
ADD = jnp.frompyfunc(operator.add, 2, 1, identity=0)
NEG = jnp.frompyfunc(lambda v: -v, 1, 1)
X = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 2


def close(got, expected, rtol=1e-6):
    np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol)


def test_call_reduce_accumulate_outer_reduceat():
    close(LAE(X, 1.0), [[1.3132617, 1.474077, 1.6931472], [1.974077, 2.3132617, 2.7014134]])
    close(LAE.reduce(X), [1.7014133, 2.2014134, 2.7014134])
    close(LAE.reduce(X, axis=1), [1.6802697, 3.1802697])
    close(LAE.reduce(X, axis=None, keepdims=True), [[3.3816829]])
    close(LAE.accumulate(X, axis=1), [[0.0, 0.974077, 1.6802697], [1.5, 2.474077, 3.1802697]])
    close(LAE.outer(jnp.arange(2.0), jnp.arange(3.0)),
          [[0.6931472, 1.3132617, 2.126928], [1.3132617, 1.6931472, 2.3132617]])
    close(LAE.reduceat(jnp.arange(6.0), jnp.array([0, 2, 5])), [1.3132617, 4.407606, 5.0])
    assert int(ADD.reduce(jnp.arange(5), where=jnp.arange(5) > 1)) == 9


def test_at_applies_again_at_repeated_indices():
    out = ADD.at(jnp.ones(6), jnp.array([1, 3, 1]), jnp.array([10.0, 20.0, 30.0]),
                 inplace=False)
    close(out, [1.0, 41.0, 1.0, 21.0, 1.0, 1.0])
    close(NEG.at(jnp.arange(4.0), jnp.array([1, 1, 3]), inplace=False), [0.0, 1.0, 2.0, -3.0])
    with pytest.raises(NotImplementedError, match="inplace"):
        ADD.at(jnp.ones(3), jnp.array([0]), jnp.ones(1))


def test_compiled_batched_and_differentiated():
    close(redraft.jit(lambda x: LAE.reduce(x, axis=1))(X), [1.6802697, 3.1802697])
    close(redraft.vmap(lambda r: LAE.reduce(r))(X), [1.6802697, 3.1802697])
    close(redraft.grad(lambda x: LAE.reduce(x, axis=None))(X),
          [[0.03399021, 0.05604038, 0.09239496], [0.15233353, 0.25115553, 0.41408542]],
          rtol=1e-5)
    close(redraft.grad(lambda x: LAE.accumulate(x, axis=1).sum())(X),
          [[1.5638645, 0.92965525, 0.50648034], [1.5638645, 0.92965525, 0.50648034]],
          rtol=1e-5)
    at = redraft.jit(lambda a, b: ADD.at(a, jnp.array([1, 3, 1]), b, inplace=False))
    close(at(jnp.ones(6), jnp.array([10.0, 20.0, 30.0])), [1.0, 41.0, 1.0, 21.0, 1.0, 1.0])
    close(redraft.grad(lambda x: NEG.at(x, jnp.array([1, 3]), inplace=False).sum())(
        jnp.arange(4.0)), [1.0, -1.0, 1.0, -1.0])


def test_methods_need_a_binary_function():
    with pytest.raises(ValueError, match="binary"):
        NEG.reduce(jnp.ones(3))
