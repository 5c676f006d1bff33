"""lax.platform_dependent picks the CPU branch (or the default) as JAX 0.10.2 does on the
CPU, eagerly and in transformed code, where the other branches are never read."""
import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import lax


def cpu_or_default(x):
    return lax.platform_dependent(x, default=lambda v: v + 1, cpu=lambda v: v * 10)


def default_only_here(x, a):
    return lax.platform_dependent(x, default=lambda v: v + a, cuda=lambda v: v * a)


def tpu_only(x):
    return lax.platform_dependent(x, tpu=lambda v: v + 1)


def test_the_cpu_branch_runs():
    assert float(cpu_or_default(2.0)) == 20.0
    assert float(redraft.jit(cpu_or_default)(2.0)) == 20.0
    assert float(redraft.grad(cpu_or_default)(2.0)) == 10.0
    np.testing.assert_array_equal(redraft.vmap(cpu_or_default)(jnp.arange(3.0)), [0, 10, 20])


def test_the_default_runs_without_a_cpu_branch_and_captures_values():
    assert float(default_only_here(2.0, 5.0)) == 7.0
    assert float(redraft.jit(default_only_here)(2.0, 5.0)) == 7.0
    assert float(redraft.grad(default_only_here, argnums=1)(2.0, 5.0)) == 1.0


def test_no_branch_for_the_platform():
    with pytest.raises(NotImplementedError, match="no branch for platform 'cpu'"):
        tpu_only(1.0)
    with pytest.raises(Exception, match="no branch for platform 'cpu'"):
        redraft.jit(tpu_only)(1.0)
