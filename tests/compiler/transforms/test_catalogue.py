"""Every function of the catalogue (catalogue.py) differentiated to order 2 in forward and
reverse mode by check_grads, plus value checks: the eager result against NumPy, gradients
against closed forms, grad against value_and_grad and vjp, and no NaN where a `where` hides
an infinite branch."""
import numpy as np
import pytest

import redraft
from redraft.runtime.pytree import tree_flatten, tree_map
from redraft.test_util import check_grads

import catalogue
from catalogue import CATALOGUE, arguments, entry_id


def _params(entries):
    out = []
    for entry in entries:
        marks = []
        if "xfail" in entry[2]:
            marks.append(pytest.mark.xfail(strict=True, reason=entry[2]["xfail"]))
        out.append(pytest.param(entry, id=entry_id(entry), marks=marks))
    return out


def _supported(key=None):
    return [e for e in CATALOGUE if "xfail" not in e[2] and (key is None or key in e[2])]


def _np(tree):
    return tree_map(lambda v: np.asarray(v, np.float64), tree)


def _close(actual, expected, rtol=1e-4, atol=1e-5, what=""):
    a_leaves, e_leaves = tree_flatten(actual)[0], tree_flatten(expected)[0]
    assert len(a_leaves) == len(e_leaves), what
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(e, np.float64),
                                   rtol=rtol, atol=atol, err_msg=what)


def _is_scalar_function(entry) -> bool:
    try:
        with np.errstate(all="ignore"):
            out = entry[0](*arguments(entry))
    except Exception:  # noqa: BLE001 - test_check_grads reports it
        return False
    return len(tree_flatten(out)[0]) == 1 and np.shape(out) == ()


# ---- the catalogue itself ----------------------------------------------------------------------

def test_catalogue_is_large_and_documented():
    functions = {id(e[0]): e[0] for e in CATALOGUE}
    assert len(functions) >= 60
    for fn in functions.values():
        assert fn.__doc__ and fn.__doc__.strip(), f"{fn.__name__} needs a docstring"
    ids = [entry_id(e) for e in CATALOGUE]
    assert len(ids) == len(set(ids)), "catalogue ids must be unique"


@pytest.mark.parametrize("entry", _params(CATALOGUE))
def test_check_grads(entry):
    """check_grads to order 2, forward and reverse (reverse over reverse, forward over
    forward, and each mode checked against the other and finite differences)."""
    fn, _, options = entry
    with np.errstate(all="ignore"):  # untaken `where` branches may overflow
        check_grads(fn, arguments(entry), order=options.get("order", 2),
                    modes=options.get("modes", ("fwd", "rev")),
                    atol=options.get("atol", 1e-2), rtol=options.get("rtol", 1e-2))


# ---- values --------------------------------------------------------------------------------------

@pytest.mark.parametrize("entry", _params(_supported("numpy")))
def test_value_matches_numpy(entry):
    fn, _, options = entry
    args = arguments(entry)
    expected = options["numpy"](*_np(args))
    _close(fn(*args), expected, rtol=1e-5, atol=1e-5, what="eager value")


@pytest.mark.parametrize("entry", _params(_supported("grad")))
def test_grad_matches_closed_form(entry):
    fn, _, options = entry
    args = arguments(entry)
    with np.errstate(all="ignore"):
        g = redraft.grad(fn)(*args)
        expected = options["grad"](*_np(args))
    assert np.all(np.isfinite(np.asarray(g))), f"non-finite gradient {g}"
    _close(g, expected, rtol=options.get("grad_rtol", 1e-4), atol=1e-5, what="gradient")


@pytest.mark.parametrize("entry", _params([e for e in _supported() if _is_scalar_function(e)]))
def test_grad_agrees_with_value_and_grad_and_vjp(entry):
    """grad, value_and_grad and vjp are three generated functions; they must agree."""
    fn, _, _ = entry
    args = arguments(entry)
    argnums = tuple(range(len(args)))
    with np.errstate(all="ignore"):
        grads = redraft.grad(fn, argnums=argnums)(*args)
        value, grads_v = redraft.value_and_grad(fn, argnums=argnums)(*args)
        out, vjp_fun = redraft.vjp(fn, *args)
        grads_r = vjp_fun(np.float32(1.0))
    _close(value, fn(*args), what="value_and_grad's value")
    _close(out, value, what="vjp's value")
    _close(grads_v, grads, what="value_and_grad's gradient")
    _close(grads_r, grads, what="vjp's cotangents")
    for leaf in tree_flatten(grads)[0]:
        assert np.all(np.isfinite(np.asarray(leaf)))


@pytest.mark.parametrize("entry", _params(_supported("grad")))
def test_grad_of_jit_matches_grad(entry):
    fn, _, _ = entry
    args = arguments(entry)
    with np.errstate(all="ignore"):
        _close(redraft.grad(redraft.jit(fn))(*args), redraft.grad(fn)(*args), what="grad(jit)")


# ---- constructs whose gradients have a known shape -----------------------------------------------

def test_pytree_gradients_keep_their_structure():
    pt = catalogue.Point(np.float32(1.0), np.float32(2.0), np.float32(3.0))
    g = redraft.grad(catalogue.point_dist)(pt)
    assert isinstance(g, catalogue.Point)
    n = np.sqrt(14.0)
    _close(np.array([g.x, g.y, g.z]), np.array([1, 2, 3]) / n, rtol=1e-6)
    params = {"w": catalogue.vec(seed=45), "b": catalogue.vec(seed=46)}
    g = redraft.grad(catalogue.dict_input)(params)
    assert isinstance(g, dict) and set(g) == {"w", "b"}
    pair = (catalogue.vec(seed=47), catalogue.vec(seed=48))
    g = redraft.grad(catalogue.tuple_input)(pair)
    assert isinstance(g, tuple) and len(g) == 2
    _close(g, (np.sin(pair[1]), pair[0] * np.cos(pair[1])))
    xs = [catalogue.vec(2, seed=14), catalogue.vec(3, seed=15)]
    g = redraft.grad(catalogue.loop_over_list)(xs)
    assert isinstance(g, list) and [np.shape(v) for v in g] == [(2,), (3,)]


def test_where_gradients_are_not_nan_in_untaken_infinite_branches():
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    with np.errstate(all="ignore"):
        g = redraft.grad(catalogue.where_log_unguarded)(x)
        _close(g, np.array([0.0, 0.0, 0.5]))
        g = redraft.grad(catalogue.where_exp_overflow)(np.array([1.0, 50.0], np.float32))
        _close(g, np.array([1.0, 1.0]))
        t = redraft.jvp(catalogue.where_exp_overflow, (np.array([1.0, 50.0], np.float32),),
                        (np.ones(2, np.float32),))[1]
        _close(t, 2.0)
        h = redraft.hessian(catalogue.where_log_unguarded)(x)
    assert np.all(np.isfinite(np.asarray(h)))
    _close(np.diag(np.asarray(h)), np.array([0.0, 0.0, -0.25]))


def test_stable_functions_stay_finite():
    x = np.array([1000.0, 1000.5, 999.0], np.float32)
    with np.errstate(all="ignore"):
        value = catalogue.logsumexp_manual(x - 1000.0) + 1000.0
        g = redraft.grad(catalogue.logsumexp_manual)(x)
    e = np.exp(x - x.max())
    _close(value, x.max() + np.log(e.sum()), rtol=1e-6)
    _close(g, e / e.sum(), rtol=1e-5)
    g = redraft.grad(catalogue.logsumexp_large)(x - 100.0)
    _close(g, e / e.sum(), rtol=1e-5)
    small = np.array([1e-7, -1e-7], np.float32)
    _close(redraft.grad(lambda v: redraft.numpy.sum(redraft.numpy.log1p(v)))(small),
           1 / (1 + small.astype(np.float64)), rtol=1e-6)


THIRD_ORDER = ("loop_range", "loop_with_branch", "loop_nested_carried", "while_halving",
               "while_vector", "branch_elif-if", "branch_same_condition", "recursion",
               "at_set_loop", "point_dist", "calls_helper", "dict_input")


@pytest.mark.parametrize("entry", _params([e for e in CATALOGUE if entry_id(e) in THIRD_ORDER]))
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_third_order(entry, mode):
    """Derivatives of derivatives of derivatives: generated code is transformed again."""
    fn, _, options = entry
    check_grads(fn, arguments(entry), order=3, modes=(mode,))
