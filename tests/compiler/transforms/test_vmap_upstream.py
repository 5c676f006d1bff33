"""Frontend bugs vmap works around, each reported with a strict xfail (the generated Core of
these functions must behave as the Python does; when a fix lands, the xfail fails)."""
import numpy as np
import pytest
from redraft.compiler.core.loader import load
from redraft.compiler.transforms.calls.callable_core import core_of

import redraft.numpy as jnp


def _numpy_module():
    return jnp


def sum_through_a_local_module_alias(x):
    np_ = _numpy_module()
    return np_.sum(x, axis=0)


def comprehension_variable_reused_across_branches(first, second, flag):
    a = tuple(v + 1 for v in first) if flag else tuple(first)
    b = tuple(v + 1 for v in second) if flag else tuple(second)
    return a + b


@pytest.mark.xfail(strict=True, reason="normalize reads `alias.sum(x)` on a local module "
                   "alias as the array method `x.sum()`: jnp.sum(alias, x, axis=0)")
def test_a_call_through_a_local_module_alias_keeps_its_arguments():
    x = jnp.ones((2, 3))
    generated = load(core_of(sum_through_a_local_module_alias))
    np.testing.assert_allclose(generated(x), np.full(3, 2.0))


def test_a_zero_trip_comprehension_in_a_branch_runs():
    """ssa merged a comprehension's loop variable after a loop that ran zero times
    (UnboundLocalError); a merge nothing reads is now dropped."""
    generated = load(core_of(comprehension_variable_reused_across_branches))
    assert generated((1, 2), (), True) == (2, 3)
