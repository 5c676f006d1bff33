"""Python statements JAX runs at trace time, under jit, grad, vmap and jit(grad): `try`
decided when the source is read, dict and list methods that change the container, `del`,
`for`/`while ... else`, lambdas with defaults stored in lists, map/filter/itertools.chain,
set displays, `d |= {...}`, `match` (as if/else chains). Each transformed result is checked
against the function run as plain Python (eagerly, where nothing is transformed), gradients
against float64 central differences, and vmap against a loop over the examples."""
import functools
import itertools

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft.compiler.frontend.normalize import UnsupportedSyntaxError

CFG = {"depth": 2}
X = np.array([0.3, -0.7, 1.1], np.float32)


def try_missing_key(x):
    cfg = {"scale": 2.0}
    try:
        lr = cfg["lr"]
    except KeyError:
        lr = 0.1
    return jnp.sum(jnp.sin(x) * lr * cfg["scale"])


def try_import_fallback(x):
    try:
        import redraft_no_such_module  # noqa: F401
        k = 3.0
    except ImportError:
        k = 2.0
    return jnp.sum(x * k)


def try_else_finally(x):
    try:
        depth = CFG["depth"]
    except (KeyError, TypeError):
        depth = 0
    else:
        depth = depth + 1
    finally:
        extra = 0.5
    return jnp.sum(x ** 2) * depth + extra


def try_return_in_handler(x):
    try:
        scale = CFG["scale"]
    except KeyError as e:
        return jnp.sum(jnp.cos(x)) * len(str(e))
    return jnp.sum(x) * scale


def dict_methods(x):
    d = {"a": x}
    d.update({"b": x * 2.0})
    d.update(c=x * 3.0)
    d.setdefault("d", jnp.sin(x))
    d.setdefault("a", x * 5.0)
    b = d.pop("b")
    missing = d.pop("zzz", 1.5)
    del d["c"]
    d |= {"e": x * x}
    return sum(jnp.sum(jnp.sin(v)) for v in d.values()) + jnp.sum(b * missing) + len(d)


def list_methods(x):
    ys = [x, x * 2.0, x * 3.0, jnp.cos(x)]
    del ys[1]
    ys.extend([x * 4.0])
    first = ys.pop(0)
    total = jnp.sum(first)
    while ys:
        total = total + jnp.sum(jnp.sin(ys.pop()))
    return total


def loops_with_else(x):
    total = 0.0
    for i in range(3):
        if i == 5:
            break
        total = total + x[i]
    else:
        total = total * 2.0
    for i in range(3):
        if i == 1:
            break
        total = total + x[i]
    else:
        total = total * 100.0
    n = 0
    while n < 2:
        total = total * 1.5
        n += 1
    else:
        total = total + 1.0
    return total


def lambdas_with_defaults(x):
    w = x * 0.5
    fs = [lambda v, k=k: v * k + w for k in range(1, 4)]
    return sum(jnp.sum(jnp.tanh(f(x))) for f in fs)


def iteration_builtins(x):
    xs = [x[0], x[1], x[2]]
    ys = list(map(jnp.sin, xs))
    prods = list(map(lambda a, b: a * b, xs, ys))
    kept = list(filter(lambda v: True, prods))
    flat = list(itertools.chain([x[0]], [x[1], x[2]]))
    more = list(itertools.chain.from_iterable([[x[0]], [x[2]]]))
    return sum(kept) + sum(flat) * sum(more) + functools.reduce(lambda a, b: a * b, xs)


def set_membership(x):
    act = "gelu"
    y = jnp.maximum(x, 0.0) if act in {"relu", "gelu"} else x
    return jnp.sum(y * 2.0) + len({1, 2, 2})


def comprehension_dict_sum(x):
    evens = {i: x[i] for i in range(3) if i % 2 == 0}
    return sum(evens.values()) * 2.0


def del_slices(x):
    ys = [x, x * 2.0, x * 3.0, x * 4.0]
    del ys[1:3]
    zs = [x, jnp.sin(x), x * 5.0]
    del zs[:1]
    ws = [x, x * 7.0]
    del ws[1:]
    return jnp.sum(ys[0] * ys[1]) + jnp.sum(zs[0] * zs[1]) + jnp.sum(ws[0]) + len(ys) + len(ws)


MODES = ("square", None, "linear", [2.0, 0.5], (0.5, 2.0), {"scale": 3.0, "shift": 1.0},
         "other")


def _matched(x, mode):
    match mode:
        case "square" | "sq":
            return x ** 2
        case None:
            return x
        case str() as name if name.startswith("lin"):
            return x * 2
        case [a, b] if a > b:
            return x * a - b
        case {"scale": s, "shift": t}:
            return x * s + t
        case (_, b):
            return x * b
        case _:
            return jnp.sin(x)


def match_statements(x):
    return sum(jnp.sum(jnp.tanh(_matched(x, m))) for m in MODES)


def match_on_expressions(x):
    match CFG["depth"]:
        case 1:
            y = x
        case 2:
            y = x * x
    match x.ndim:
        case 1:
            return jnp.sum(y)
        case _:
            return jnp.sum(y) * 2


CASES = [del_slices, try_missing_key, try_import_fallback, try_else_finally, try_return_in_handler,
         dict_methods, list_methods, loops_with_else, lambdas_with_defaults,
         iteration_builtins, set_membership, comprehension_dict_sum, match_statements,
         match_on_expressions]


def _numerical_grad(fn, x, eps=1e-3):
    x64 = x.astype(np.float64)
    out = np.zeros_like(x64)
    for i in range(x64.size):
        up, down = x64.copy(), x64.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = (float(fn(jnp.asarray(up.astype(np.float32))))
                  - float(fn(jnp.asarray(down.astype(np.float32))))) / (2 * eps)
    return out


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_jit_grad_and_vmap_agree_with_plain_python(fn):
    eager = float(fn(jnp.asarray(X)))
    np.testing.assert_allclose(float(redraft.jit(fn)(X)), eager, rtol=1e-5)
    g = np.asarray(redraft.grad(fn)(X))
    np.testing.assert_allclose(g, _numerical_grad(fn, X), rtol=2e-2, atol=2e-3)
    np.testing.assert_allclose(np.asarray(redraft.jit(redraft.grad(fn))(X)), g, rtol=1e-5,
                               atol=1e-6)
    xs = np.stack([X * (k + 1) for k in range(4)])
    want = [float(fn(jnp.asarray(row))) for row in xs]
    np.testing.assert_allclose(np.asarray(redraft.vmap(fn)(xs)), want, rtol=1e-5)


def test_a_try_is_decided_when_the_source_is_read_and_reraises_what_no_handler_catches():
    def uncaught(x):
        try:
            v = CFG["missing"]
        except IndexError:
            v = 0.0
        finally:
            pass
        return x * v

    with pytest.raises(KeyError):
        redraft.jit(uncaught)(X)


def _try_on_an_argument(x):
    try:
        assert x.shape[0] == 3
        y = x * 2.0
    except AssertionError:
        y = x
    return jnp.sum(y)


def _try_on_a_dict(d):
    try:
        y = d["x"] * d["scale"]
    except KeyError:
        y = d["x"]
    return jnp.sum(y)


def test_a_try_reading_the_functions_values_is_decided_when_it_runs():
    np.testing.assert_allclose(float(redraft.jit(_try_on_an_argument)(X)), 2 * X.sum(),
                               rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(_try_on_an_argument)(X), [2.0] * 3)
    np.testing.assert_allclose(redraft.grad(_try_on_an_argument)(X[:2]), [1.0] * 2)
    xs = np.stack([X, 2 * X])  # under vmap, decided on an example (its shape is (3,))
    np.testing.assert_allclose(redraft.vmap(_try_on_an_argument)(xs), 2 * xs.sum(axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(redraft.vmap(redraft.grad(_try_on_an_argument))(xs),
                               np.full((2, 3), 2.0))
    with pytest.raises(redraft.compiler.transforms.common.TransformError) as info:
        redraft.vmap(_try_on_a_dict)({"x": xs, "scale": np.ones(2, np.float32)})
    message = str(info.value)
    assert message.startswith(f"{__file__}:") and "`d`, which holds batched" in message


class _Config:
    def __init__(self, lr):
        self.lr = lr

    def __hash__(self):
        return hash(self.lr)

    def __eq__(self, other):
        return isinstance(other, _Config) and other.lr == self.lr


def _step(x, config, options):
    try:
        momentum = config.momentum
    except AttributeError:
        momentum = 0.9
    try:
        clip = options["clip"]
    except KeyError:
        clip = 10.0
    return jnp.sum(jnp.minimum(x * config.lr * momentum, clip))


def test_a_try_on_a_static_argument_and_a_dicts_keys():
    options = {"scale": jnp.asarray(1.0)}
    want = float(np.minimum(X * 0.5 * 0.9, 10.0).sum())
    got = redraft.jit(_step, static_argnums=1)(X, _Config(0.5), options)
    np.testing.assert_allclose(float(got), want, rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(_step)(X, _Config(0.5), options), [0.45] * 3,
                               rtol=1e-6)
    clipped = redraft.jit(_step, static_argnums=1)(X, _Config(0.5), {"clip": jnp.asarray(0.1)})
    np.testing.assert_allclose(float(clipped), float(np.minimum(X * 0.45, 0.1).sum()),
                               rtol=1e-6)


def _try_in_a_loop(x):
    total = 0.0
    for key in ["a", "b", "c"]:
        try:
            v = {"a": 1.0, "c": 3.0}[key]
        except KeyError:
            continue
        total = total + jnp.sum(x) * v
    return total


def test_a_try_in_a_loop_over_constants_is_decided_for_each():
    test_jit_grad_and_vmap_agree_with_plain_python(_try_in_a_loop)


def _nonlocal_counter(x):
    count = 0

    def bump(v):
        nonlocal count
        count += 1
        return v * 2.0
    return jnp.sum(bump(x)) * count


def test_assigning_a_nonlocal_in_a_function_called_directly_is_passed_back():
    """bump's `count += 1` is the enclosing function's count after the call, as in Python
    (tests/compiler/frontend/test_nonlocal.py has more)."""
    test_jit_grad_and_vmap_agree_with_plain_python(_nonlocal_counter)


def _nonlocal_counter_passed_to_map(x):
    count = 0

    def bump(v):
        nonlocal count
        count += 1
        return v * 2.0
    return jnp.sum(jnp.stack(list(map(bump, [x, x])))) * count + jnp.sum(
        redraft.vmap(bump)(x))


def test_assigning_a_nonlocal_in_a_function_used_as_a_value_is_refused_as_nonlocal():
    with pytest.raises(UnsupportedSyntaxError, match="nonlocal 'count'"):
        redraft.jit(_nonlocal_counter_passed_to_map)(X)


def _layer(v, w, b):
    return jnp.tanh(v * w + b)


def closures_in_a_dict_called_by_key(x):
    w = x * 0.5
    acts = {"scale": lambda v: v * w, "sin": jnp.sin}
    y = x
    for name in ["scale", "sin", "scale"]:
        y = acts[name](y)
    return jnp.sum(y) + jnp.sum(acts["scale"](x))


def partials_in_a_list(x):
    w = x * 0.3
    layers = [functools.partial(_layer, w=w, b=0.1), functools.partial(_layer, w=2.0, b=x)]
    y = x
    for layer in layers:
        y = layer(y)
    return jnp.sum(y)


def closures_in_a_display(x):
    w = jnp.cos(x)
    fns = (lambda v: v + w, lambda v: v * w, jnp.tanh)
    y = x
    for f in fns:
        y = f(y)
    return jnp.sum(y)


@pytest.mark.parametrize("fn", [closures_in_a_dict_called_by_key, partials_in_a_list,
                                closures_in_a_display], ids=lambda f: f.__name__)
def test_closures_and_partials_held_in_containers_are_differentiated_in_what_they_capture(fn):
    test_jit_grad_and_vmap_agree_with_plain_python(fn)


def _try_with_comprehensions(x):
    keys = ["depth"]
    scales = {"a": x * 1.0, "b": x * 2.0}
    try:
        total = sum([CFG[k] for k in keys])
        parts = [scales[k] for k in ["a", "b"]]
        extra = scales["c"]
    except KeyError:
        extra = 0.5
    return jnp.sum(parts[0] * parts[1]) * total + extra


def test_comprehensions_in_a_try_body_see_its_names():
    # the body runs in one namespace, so a comprehension reads the function's values too
    eager = float(_try_with_comprehensions(jnp.asarray(X)))
    np.testing.assert_allclose(float(redraft.jit(_try_with_comprehensions)(X)), eager,
                               rtol=1e-6)
    np.testing.assert_allclose(redraft.grad(_try_with_comprehensions)(X), 2 * 2 * 2 * X,
                               rtol=1e-5)



def test_a_match_pattern_with_a_rest_is_refused_at_the_users_line():
    def starred(x, spec):
        match spec:
            case [first, *rest]:
                return x * first * len(rest)
        return x

    with pytest.raises(UnsupportedSyntaxError, match="not supported.*if/elif"):
        redraft.grad(lambda x: jnp.sum(starred(x, [2.0, 3.0])))(X)
