"""The one fresh-name generator (compiler/core/names.py) that the frontend, SSA renaming and
every transform share."""
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


def test_a_shared_set_sees_names_taken_later_and_scratch_does_not_leak():
    taken = {"a"}
    names = Names(taken)
    taken.add("b")
    assert names.local("b") == "b_1"
    trial = names.scratch()
    trial.local("c")
    assert names.local("c") == "c"
