"""The one fresh-name generator (compiler/core/names.py) that the frontend, SSA renaming and
every transform share."""
import numpy as np

from redraft.compiler.core import ir
from redraft.compiler.core.names import Names


def test_local_keeps_a_free_spelling_and_numbers_a_taken_one():
    names = Names({"x", "x_1"})
    assert names.local("y") == "y"
    assert names.local("x") == "x_2"
    assert names.local("lambda_") == "lambda_"  # a user's spelling is never changed


def test_fresh_numbers_temporaries_in_one_series():
    fn = ir.Function("f", ("x",), [ir.Assign(("t3",), ir.Var("x"), None)], (), "f.py", 1,
                     None, ir.FunctionMeta())
    names = Names(fn)
    assert names.fresh("t") == "t4"
    assert names.fresh("t3") == "t5"
    assert names.fresh("x_") == "x_1"
    assert names.derived_name("x", "bar") == names.derived_name("x", "bar") == "x_bar"


def test_a_shared_set_sees_names_taken_later():
    taken = {"a"}
    names = Names(taken)
    taken.add("b")
    assert names.local("b") == "b_1"
    assert "b_1" in taken


K_GLOBAL = np.ones(2, np.float32)  # an array global is read by name, not folded


def test_names_a_function_reads_but_does_not_bind_are_taken():
    """A transform's new `k` (a loop index) must not shadow the user's global or captured `k`
    in the generated module: that silently read the index in place of the user's value."""
    import redraft.numpy as jnp
    from redraft.compiler.transforms.calls.callable_core import core_of

    def f(x):
        return jnp.sin(x) * K_GLOBAL

    names = Names(core_of(f))
    assert names.local("K_GLOBAL") != "K_GLOBAL"
    assert names.local("jnp") != "jnp"
