"""conv_general_dilated against a direct loop over XLA's definition, in every layout."""
import itertools

import numpy as np
import pytest

import redraft.lax as lax
import redraft.numpy as jnp
from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.conv import (ConvDimensionNumbers, conv_dimension_numbers,
                                              conv_general_dilated_p, padtype_to_pads)


# ---- the reference: XLA's definition, one output element at a time -----------------------

def _input_value(x, n, c, pos, padding, lhs_dilation):
    """lhs[n, c] at `pos` of its dilated and padded spatial grid (0 off the grid)."""
    index = []
    for p, (lo, _), d, size in zip(pos, padding, lhs_dilation, x.shape[2:]):
        q = p - lo
        if q < 0 or q % d or q // d >= size:
            return 0.0
        index.append(q // d)
    return x[(n, c) + tuple(index)]


def _out_size(size, k, stride, lo, hi, ld, rd):
    padded = (size - 1) * ld + 1 + lo + hi if size else lo + hi
    window = (k - 1) * rd + 1 if k else 0
    return (padded - window) // stride + 1 if padded >= window else 0


def reference_conv(x, w, strides, padding, lhs_dilation, rhs_dilation, feature_groups=1,
                   batch_groups=1):
    """x is (N, C, *S), w is (O, I, *K); returns (N / batch_groups, O, *out)."""
    (n_in, _), (n_out, n_i) = x.shape[:2], w.shape[:2]
    out_spatial = [_out_size(s, k, st, lo, hi, ld, rd) for s, k, st, (lo, hi), ld, rd in
                   zip(x.shape[2:], w.shape[2:], strides, padding, lhs_dilation, rhs_dilation)]
    per_batch = n_in // batch_groups
    out = np.zeros([per_batch, n_out] + out_spatial)
    for n, o in itertools.product(range(per_batch), range(n_out)):
        g = o // (n_out // feature_groups)
        b = o // (n_out // batch_groups)
        for pos in itertools.product(*map(range, out_spatial)):
            acc = 0.0
            for i, taps in itertools.product(range(n_i), itertools.product(*map(range,
                                                                                 w.shape[2:]))):
                where = [p * st + t * rd for p, st, t, rd in zip(pos, strides, taps,
                                                                  rhs_dilation)]
                acc += _input_value(x, b * per_batch + n, g * n_i + i, where, padding,
                                    lhs_dilation) * w[(o, i) + taps]
            out[(n, o) + pos] = acc
    return out


# ---- random cases ----------------------------------------------------------------------

SPATIAL_LETTERS = "HWD"


def _random_layouts(rng, n_spatial):
    letters = SPATIAL_LETTERS[:n_spatial]
    return tuple("".join(rng.permutation(list(pair + letters))) for pair in ("NC", "OI", "NC"))


def _to_layout(canonical, layout, pair, rhs_layout):
    """Transpose a canonical (pair[0], pair[1], spatial in rhs order) array into `layout`."""
    canon_letters = pair + "".join(c for c in rhs_layout if c not in "OI")
    return np.transpose(canonical, [canon_letters.index(c) for c in layout])


def _random_case(seed):
    rng = np.random.RandomState(seed)
    n_spatial = [1, 1, 2, 2, 2, 3][seed % 6]
    feature_groups, batch_groups = [(1, 1), (2, 1), (1, 2), (3, 1)][seed % 4]
    batch = batch_groups * rng.randint(1, 3)
    in_per_group = rng.randint(1, 3)
    out_features = feature_groups * batch_groups * rng.randint(1, 3)
    limit = 5 if n_spatial < 3 else 3
    spatial = rng.randint(1, limit + 1, n_spatial)
    kernel = rng.randint(1, 4, n_spatial)
    strides = rng.randint(1, 3, n_spatial)
    lhs_dilation = rng.randint(1, 3, n_spatial)
    rhs_dilation = rng.randint(1, 3, n_spatial)
    padding = [tuple(rng.randint(-1, 3, 2)) for _ in range(n_spatial)]
    x = rng.randn(batch, feature_groups * in_per_group, *spatial).astype(np.float32)
    w = rng.randn(out_features, in_per_group, *kernel).astype(np.float32)
    return dict(x=x, w=w, strides=tuple(strides), padding=padding,
                lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(rhs_dilation),
                feature_groups=feature_groups, batch_groups=batch_groups,
                layouts=_random_layouts(rng, n_spatial) if seed % 3 else None)


def _padding_fits(case):
    for s, (lo, hi), ld in zip(case["x"].shape[2:], case["padding"], case["lhs_dilation"]):
        if (s - 1) * ld + 1 + lo + hi < 0:
            return False
    return True


@pytest.mark.parametrize("seed", range(48))
def test_matches_reference_in_random_layouts(seed):
    case = _random_case(seed)
    if not _padding_fits(case):
        case["padding"] = [(max(lo, 0), max(hi, 0)) for lo, hi in case["padding"]]
    x, w, layouts = case["x"], case["w"], case["layouts"]
    expected = reference_conv(x, w, case["strides"], case["padding"], case["lhs_dilation"],
                              case["rhs_dilation"], case["feature_groups"],
                              case["batch_groups"])
    if layouts is None:
        lhs, rhs = x, w
    else:
        lhs = _to_layout(x, layouts[0], "NC", layouts[1])
        rhs = _to_layout(w, layouts[1], "OI", layouts[1])
        expected = _to_layout(expected, layouts[2], "NC", layouts[1])
    out = lax.conv_general_dilated(lhs, rhs, case["strides"], case["padding"],
                                   case["lhs_dilation"], case["rhs_dilation"], layouts,
                                   feature_group_count=case["feature_groups"],
                                   batch_group_count=case["batch_groups"])
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


# ---- the seed documents' examples ----------------------------------------------------------

def test_full_padding_is_numpy_convolve():
    x, y = jnp.array([1, 2, 1]), jnp.ones(10)
    out = lax.conv_general_dilated(x.reshape(1, 1, 3).astype(float), y.reshape(1, 1, 10),
                                   window_strides=(1,), padding=[(9, 9)])
    np.testing.assert_allclose(np.asarray(out[0, 0]), [1, 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 1])


def test_valid_is_a_cross_correlation():
    k = jnp.array([1., 2., 3.])
    out = lax.conv_general_dilated(jnp.arange(5.).reshape(1, 1, 5), k.reshape(1, 1, 3), (1,),
                                   "VALID")
    np.testing.assert_allclose(np.asarray(out[0, 0]),
                               np.correlate(np.arange(5.), [1., 2., 3.], "valid"))


# ---- padding names, layouts, groups -------------------------------------------------------

def test_padding_names():
    assert padtype_to_pads((5,), (3,), (2,), "SAME") == ((1, 1),)
    assert padtype_to_pads((4,), (2,), (1,), "SAME") == ((0, 1),)
    assert padtype_to_pads((4,), (2,), (1,), "SAME_LOWER") == ((1, 0),)
    assert padtype_to_pads((4, 6), (2, 3), (1, 1), "VALID") == ((0, 0), (0, 0))


@pytest.mark.parametrize("name", ["SAME", "SAME_LOWER", "VALID"])
def test_named_padding_equals_explicit(name):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3, 7, 6).astype(np.float32)
    w = rng.randn(4, 3, 3, 2).astype(np.float32)
    strides, dilation = (2, 1), (1, 2)
    pads = padtype_to_pads((7, 6), (3, 3), strides, name)
    named = lax.conv_general_dilated(x, w, strides, name, rhs_dilation=dilation)
    explicit = lax.conv_general_dilated(x, w, strides, pads, rhs_dilation=dilation)
    np.testing.assert_array_equal(np.asarray(named), np.asarray(explicit))
    if name != "VALID":
        assert named.shape == (2, 4, 4, 6)


def test_string_dimension_numbers():
    dn = conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3


def test_nhwc_matches_nchw():
    rng = np.random.RandomState(1)
    x = rng.randn(2, 6, 5, 3).astype(np.float32)
    w = rng.randn(3, 2, 3, 4).astype(np.float32)
    nhwc = lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=("NHWC", "HWIO",
                                                                           "NHWC"))
    nchw = lax.conv_general_dilated(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 2),
                                    "SAME")
    np.testing.assert_allclose(np.asarray(nhwc), np.asarray(nchw).transpose(0, 2, 3, 1),
                               rtol=1e-5, atol=1e-5)


def test_depthwise():
    rng = np.random.RandomState(2)
    x = rng.randn(1, 4, 9).astype(np.float32)
    w = rng.randn(4, 1, 3).astype(np.float32)
    out = lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=4)
    for c in range(4):
        np.testing.assert_allclose(np.asarray(out[0, c]), np.correlate(x[0, c], w[c, 0],
                                                                       "valid"), rtol=1e-5)


def test_integer_inputs_are_exact_and_widen_with_preferred_type():
    x = np.full((1, 2, 4), 100, np.int8)
    w = np.full((1, 2, 2), 100, np.int8)
    out = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.full((1, 1, 3), 40000))
    exact = lax.conv_general_dilated(np.arange(6, dtype=np.int32).reshape(1, 1, 6),
                                     np.array([[[1, -1]]], np.int32), (2,), [(0, 0)])
    assert exact.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(exact), [[[-1, -1, -1]]])


def test_empty_output_and_empty_kernel():
    x = np.ones((2, 3, 2), np.float32)
    w = np.ones((4, 3, 5), np.float32)
    assert lax.conv_general_dilated(x, w, (1,), "VALID").shape == (2, 4, 0)
    empty_kernel = np.ones((4, 3, 0), np.float32)
    out = lax.conv_general_dilated(x, empty_kernel, (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(out), np.zeros((2, 4, 3)))


def test_conveniences():
    rng = np.random.RandomState(3)
    x = rng.randn(1, 2, 6, 6).astype(np.float32)
    w = rng.randn(3, 2, 3, 3).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(lax.conv(x, w, (1, 1), "SAME")), np.asarray(
        lax.conv_general_dilated(x, w, (1, 1), "SAME")))
    general = lax.conv_with_general_padding(x, w, (1, 1), [(1, 0), (2, 2)], (2, 1), (1, 2))
    expected = reference_conv(x, w, (1, 1), [(1, 0), (2, 2)], (2, 1), (1, 2))
    np.testing.assert_allclose(np.asarray(general), expected, rtol=1e-5, atol=1e-5)


def _transposed_reference(x, w0, stride, padding):
    """Scatter form of a transposed conv: x (N, L, Cin), w0 (K, Cout, Cin), TF semantics."""
    n, length, _ = x.shape
    k = w0.shape[0]
    full = np.zeros((n, length * stride + k, w0.shape[1]))
    for i, t in itertools.product(range(length), range(k)):
        full[:, i * stride + t] += x[:, i] @ w0[t].T
    if padding == "VALID":
        return full[:, :length * stride + max(k - stride, 0)]
    crop = max(k - stride, 0) // 2
    return full[:, crop:crop + length * stride]


@pytest.mark.parametrize("stride,k,padding", [(1, 3, "VALID"), (2, 3, "VALID"),
                                              (3, 2, "VALID"), (2, 3, "SAME"),
                                              (2, 4, "SAME"), (3, 2, "SAME")])
def test_conv_transpose_is_the_scatter_form(stride, k, padding):
    rng = np.random.RandomState(stride * 10 + k)
    x = rng.randn(2, 5, 3).astype(np.float32)
    w0 = rng.randn(k, 4, 3).astype(np.float32)
    out = lax.conv_transpose(x, w0, (stride,), padding, transpose_kernel=True)
    np.testing.assert_allclose(np.asarray(out), _transposed_reference(x, w0, stride, padding),
                               rtol=1e-5, atol=1e-5)


# ---- abstract evaluation and errors ----------------------------------------------------------

def test_abstract_eval_matches_impl():
    case = _random_case(7)
    params = dict(window_strides=case["strides"], padding=tuple(case["padding"]),
                  lhs_dilation=case["lhs_dilation"], rhs_dilation=case["rhs_dilation"],
                  dimension_numbers=conv_dimension_numbers(case["x"].shape, case["w"].shape,
                                                           None),
                  feature_group_count=case["feature_groups"],
                  batch_group_count=case["batch_groups"])
    aval = abstract_eval_rules[conv_general_dilated_p](
        ShapedArray(case["x"].shape, case["x"].dtype), ShapedArray(case["w"].shape,
                                                                   case["w"].dtype), **params)
    out = lax.conv_general_dilated(case["x"], case["w"], case["strides"], case["padding"],
                                   case["lhs_dilation"], case["rhs_dilation"],
                                   feature_group_count=case["feature_groups"],
                                   batch_group_count=case["batch_groups"])
    assert (aval.shape, aval.dtype, aval.weak_type) == (out.shape, out.dtype, out.weak_type)


X = np.ones((2, 4, 6), np.float32)
W = np.ones((4, 2, 3), np.float32)


@pytest.mark.parametrize("call,error,words", [
    (lambda: lax.conv_general_dilated(X, W.astype(np.int32), (1,), "VALID"), TypeError,
     "same dtype"),
    (lambda: lax.conv_general_dilated(X, W[0], (1,), "VALID"), TypeError, "equal rank"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "VALID"), ValueError, "feature_group_count"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "VALID", feature_group_count=2,
                                      batch_group_count=2), ValueError, "at most one"),
    (lambda: lax.conv_general_dilated(X, np.ones((4, 4, 3), np.float32), (1,), "VALID",
                                      batch_group_count=4),
     ValueError, "batch_group_count 4 must divide the lhs batch size 2"),
    (lambda: lax.conv_general_dilated(X, W, (1, 1), "VALID", feature_group_count=2),
     TypeError, "window_strides"),
    (lambda: lax.conv_general_dilated(X, W, (0,), "VALID", feature_group_count=2),
     ValueError, "positive"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "FULL", feature_group_count=2),
     ValueError, "unknown padding"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "SAME", lhs_dilation=(2,),
                                      feature_group_count=2), ValueError, "lhs_dilation"),
    (lambda: lax.conv_general_dilated(X, W, (1,), [(-4, -4)], feature_group_count=2),
     ValueError, "removes more"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "VALID", dimension_numbers=(
        "NCH", "OIW", "NCH"), feature_group_count=2), TypeError, "spatial letters"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "VALID", dimension_numbers=(
        "NNH", "OIH", "NCH")), TypeError, "'N' and 'C' once"),
    (lambda: lax.conv_general_dilated(X, W, (1,), "VALID", feature_group_count=2,
                                      preferred_element_type=np.int32), TypeError,
     "preferred_element_type"),
])
def test_errors_name_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call()
