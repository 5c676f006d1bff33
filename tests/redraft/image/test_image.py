"""redraft.image against JAX 0.10.2's jax.image (values stored in image_reference.npz by
make_reference.py), its errors, and resize / scale_and_translate under jit, grad and vmap
(gradients against central differences and against JAX's)."""
import json
import pathlib

import numpy as np
import pytest

import redraft
import redraft.numpy as jnp
from redraft import image
from redraft.test_util import check_grads, numerical_grad

_DATA = np.load(pathlib.Path(__file__).with_name("image_reference.npz"))
CASES = json.loads(str(_DATA["cases"]))
METHODS = ["linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
RNG = np.random.RandomState(0)


def _tolerance(x: np.ndarray) -> float:
    return 2e-6 * max(1.0, float(np.max(np.abs(x.astype(np.float64)))))


def _run(case, x, scale=None, translation=None):
    if case["kind"] == "resize":
        return image.resize(x, case["out_shape"], case["method"], antialias=case["antialias"])
    scale = case["scale"] if scale is None else scale
    translation = case["translation"] if translation is None else translation
    return image.scale_and_translate(x, case["out_shape"], case["spatial_dims"],
                                     jnp.asarray(scale, jnp.float32),
                                     jnp.asarray(translation, jnp.float32), case["method"],
                                     antialias=case["antialias"])


@pytest.mark.parametrize("case", CASES, ids=[
    f"{c['name']}-{c['method']}-{'aa' if c['antialias'] else 'noaa'}-{c['dtype']}"
    f"-{c['in_shape']}->{c['out_shape']}" for c in CASES])
def test_matches_jax(case):
    x = _DATA[case["name"] + "/input"]
    expected = _DATA[case["name"] + "/output"]
    out = _run(case, x)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=_tolerance(x))


GRAD_CASES = [c for c in CASES if c.get("grad")]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c["name"] for c in GRAD_CASES])
def test_scale_and_translation_gradients_match_jax(case):
    x = _DATA[case["name"] + "/input"]
    out_size = int(np.prod(case["out_shape"]))
    weights = np.cos(np.arange(out_size, dtype=np.float32)).reshape(case["out_shape"])
    ds, dt = redraft.grad(lambda s, t: jnp.sum(_run(case, x, s, t) * weights),
                          argnums=(0, 1))(np.asarray(case["scale"], np.float32),
                                          np.asarray(case["translation"], np.float32))
    np.testing.assert_allclose(np.asarray(ds), _DATA[case["name"] + "/dscale"],
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(dt), _DATA[case["name"] + "/dtranslation"],
                               rtol=1e-4, atol=1e-4)


def test_names_and_aliases():
    names = ["NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5", "CUBIC", "CUBIC_PYTORCH", "AREA"]
    assert [m.name for m in image.ResizeMethod] == names
    aliases = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
               "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
               "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
               "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
               "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
    x = RNG.randn(5, 6).astype(np.float32)
    for alias, name in aliases.items():
        method = image.ResizeMethod[name]
        assert image.ResizeMethod.from_string(alias) is method
        np.testing.assert_array_equal(np.asarray(image.resize(x, (7, 4), alias)),
                                      np.asarray(image.resize(x, (7, 4), method)))


def test_reachable_from_the_top_level():
    import redraft.image as by_import
    assert redraft.image is by_import is image
    assert set(image.__all__) == {"resize", "scale_and_translate", "ResizeMethod"}


def test_errors():
    x = np.ones((4, 5), np.float32)
    with pytest.raises(ValueError, match="shape must have length equal to the number of "
                                         "dimensions of x"):
        image.resize(x, (8,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "bilinearx"'):
        image.resize(x, (8, 5), "bilinearx")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently "
                                         "supported for scale_and_translate"):
        image.scale_and_translate(x, (8, 5), (0,), np.ones(1), np.zeros(1), "nearest")
    with pytest.raises(ValueError, match="shape must have length"):
        image.scale_and_translate(x, (8, 5, 1), (0,), np.ones(1), np.zeros(1), "linear")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        image.scale_and_translate(x, (8, 5), (0, 1), np.ones(1), np.zeros(2), "linear")
    with pytest.raises(ValueError, match="out of range"):
        image.scale_and_translate(x, (8, 5), (2,), np.ones(1), np.zeros(1), "linear")
    with pytest.raises(TypeError, match="ResizeMethod or a string"):
        image.resize(x, (8, 5), 3)


def test_dtypes():
    ints = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert image.resize(ints, (6, 8), "nearest").dtype == np.uint8
    assert image.resize(ints, (6, 8), "linear").dtype == np.float32
    assert image.resize(ints.astype(bool), (6, 8), "cubic").dtype == np.float32
    assert image.resize(ints.astype(np.float16), (6, 8), "linear").dtype == np.float16
    empty = image.resize(np.ones((4, 3), np.float32), (0, 3), "linear")
    assert empty.shape == (0, 3)


def test_identity_and_constant_images():
    x = RNG.randn(2, 5, 3).astype(np.float32)
    for method in METHODS + ["nearest"]:
        np.testing.assert_array_equal(np.asarray(image.resize(x, x.shape, method)), x)
        up = image.resize(np.full((4, 5), 2.5, np.float32), (9, 7), method)
        np.testing.assert_allclose(np.asarray(up), 2.5, rtol=1e-6)


def _resize_all(x):
    return [image.resize(x, (2, 9, 3), m) for m in ["nearest"] + METHODS]


def test_jit_matches_eager():
    x = RNG.randn(2, 6, 5).astype(np.float32)
    for got, want in zip(redraft.jit(_resize_all)(x), _resize_all(x)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-6)

    def warp(x, s, t):
        return image.scale_and_translate(x, (2, 9, 3), (1, 2), s, t, "lanczos5",
                                         antialias=False)
    s, t = np.array([1.3, 0.7], np.float32), np.array([0.2, -0.4], np.float32)
    np.testing.assert_allclose(np.asarray(redraft.jit(warp)(x, s, t)),
                               np.asarray(warp(x, s, t)), atol=1e-6)


@pytest.mark.parametrize("method", METHODS + ["nearest"])
def test_image_gradient_matches_central_differences(method):
    x = RNG.randn(5, 4).astype(np.float64)
    weights = RNG.randn(3, 7)

    def loss(v):
        return jnp.sum(image.resize(v, (3, 7), method) * weights)
    check_grads(lambda v: image.resize(v, (3, 7), method) ** 2, (x,), order=1)
    expected = numerical_grad(lambda v: float(np.asarray(loss(v.astype(np.float32)))), x,
                              eps=1e-2)
    np.testing.assert_allclose(np.asarray(redraft.grad(loss)(x)), expected, atol=2e-3)


@pytest.mark.parametrize("method", METHODS)
def test_warp_gradient_matches_central_differences(method):
    x = RNG.randn(6, 5).astype(np.float32)
    weights = RNG.randn(8, 4).astype(np.float32)
    s0, t0 = np.array([1.37, 0.71]), np.array([0.23, -0.41])

    def loss(s, t):
        return jnp.sum(image.scale_and_translate(x, (8, 4), (0, 1), s, t, method) * weights)
    ds, dt = redraft.grad(loss, argnums=(0, 1))(s0.astype(np.float32), t0.astype(np.float32))
    num_s = numerical_grad(lambda s: float(np.asarray(loss(s.astype(np.float32),
                                                           t0.astype(np.float32)))), s0, 1e-3)
    num_t = numerical_grad(lambda t: float(np.asarray(loss(s0.astype(np.float32),
                                                           t.astype(np.float32)))), t0, 1e-3)
    np.testing.assert_allclose(np.asarray(ds), num_s, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(np.asarray(dt), num_t, rtol=2e-2, atol=2e-2)


def test_vmap_matches_a_loop():
    batch = RNG.randn(3, 6, 5).astype(np.float32)
    for method in ["nearest"] + METHODS:
        got = redraft.vmap(lambda v: image.resize(v, (4, 8), method))(batch)
        want = np.stack([np.asarray(image.resize(v, (4, 8), method)) for v in batch])
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)
    scales = np.array([[1.2, 0.8], [0.5, 2.0], [1.0, 1.0]], np.float32)
    shifts = np.array([[0.1, 0.0], [-1.0, 0.5], [0.0, 2.0]], np.float32)

    def warp(s, t):
        return image.scale_and_translate(batch[0], (7, 4), (0, 1), s, t, "cubic")
    got = redraft.vmap(warp)(scales, shifts)
    want = np.stack([np.asarray(warp(s, t)) for s, t in zip(scales, shifts)])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)


def test_nearest_index_rule_matches_jax():
    got = [np.asarray(image.resize(np.arange(m, dtype=np.int32), (n,), "nearest"))
           for m in range(1, 41) for n in range(1, 41)]
    np.testing.assert_array_equal(np.concatenate(got), _DATA["nearest_indices"])


def test_nearest_index_rule_under_jit():
    def pick(v):
        return image.resize(v, (25,), "nearest")
    x = np.arange(10, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(redraft.jit(pick)(x)), np.asarray(pick(x)))
    assert np.asarray(pick(x))[2] == 0


def test_compiled_gradient_of_a_warp():
    x = RNG.randn(6, 5).astype(np.float32)

    def loss(x, s, t):
        return jnp.sum(image.scale_and_translate(x, (8, 4), (0, 1), s, t, "linear") ** 2)
    s, t = np.array([1.37, 0.71], np.float32), np.array([0.23, -0.41], np.float32)
    grads = redraft.grad(loss, argnums=(0, 1, 2))
    for got, want in zip(redraft.jit(grads)(x, s, t), grads(x, s, t)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_x64_resizes_in_float64():
    x = RNG.randn(6, 5)
    with redraft.enable_x64():
        out = image.resize(x, (9, 3), "lanczos3")
        assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), np.asarray(image.resize(x, (9, 3), "lanczos3")),
                               atol=1e-5)
