"""redraft.random against JAX (bit for bit), on statistics, and on its errors."""
from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

import redraft
from redraft import random
from redraft.kernels import threefry

# (name, expression, dtype, shape, values): what JAX 0.10.2 (CPU, jax_threefry_partitionable
# on, 32-bit types) returned for each expression, with `random` standing for jax.random.
# The first 16 are the acceptance vectors of shared/acceptance/jax_random_vectors.json.
JAX_CASES = [('key_data', 'random.key_data(random.key(1701))', 'uint32', (2,), [0, 1701]),
 ('PRNGKey', 'random.PRNGKey(0)', 'uint32', (2,), [0, 0]),
 ('split2', 'random.key_data(random.split(random.key(1701)))', 'uint32', (2, 2),
  [741045208, 1847055613, 85238482, 2594297577]),
 ('split3_PRNGKey0', 'random.split(random.PRNGKey(0), 3)', 'uint32', (3, 2),
  [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009]),
 ('fold_in', 'random.key_data(random.fold_in(random.key(1701), 7))', 'uint32', (2,),
  [33961628, 564353879]),
 ('bits', 'random.bits(random.key(1701), (8,))', 'uint32', (8,),
  [1111271205, 2679469115, 974515252, 521976754, 2127438447, 4120601916, 260271764, 598044107]),
 ('uniform', 'random.uniform(random.key(1701), (8,))', 'float32', (8,),
  [0.2587379217147827, 0.6238625049591064, 0.2268970012664795, 0.12153208255767822,
   0.49533283710479736, 0.959402322769165, 0.06059920787811279, 0.13924288749694824]),
 ('uniform_odd', 'random.uniform(random.key(3), (3, 5), minval=-2., maxval=5.)', 'float32', (3, 5),
  [-1.4816319942474365, 4.567010402679443, 2.542699098587036, 4.829346656799316,
   -0.051355600357055664, 2.08056640625, -1.254461407661438, 0.6709623336791992,
   -0.5236018896102905, -1.1042643785476685, 3.1583781242370605, -0.9070969820022583,
   0.10637998580932617, -0.20147502422332764, 4.782333850860596]),
 ('normal', 'random.normal(random.key(1701), (8,))', 'float32', (8,),
  [-0.6472411155700684, 0.3156411051750183, -0.7491047382354736, -1.167362093925476,
   -0.01169903390109539, 1.7437922954559326, -1.5497627258300781, -1.0837270021438599]),
 ('normal_2d', 'random.normal(random.PRNGKey(42), (3, 4))', 'float32', (3, 4),
  [-0.02830461598932743, 0.4671318531036377, 0.2957029640674591, 0.15354591608047485,
   -0.12403281778097153, 0.21692314743995667, -1.440878987312317, 0.755859911441803,
   0.5214096307754517, 0.9101703763008118, -0.3844965994358063, 1.139823317527771]),
 ('normal_scalar', 'random.normal(random.PRNGKey(0), ())', 'float32', (), [1.622642159461975]),
 ('randint', 'random.randint(random.key(5), (10,), 0, 100)', 'int32', (10,),
  [61, 48, 3, 36, 84, 1, 79, 13, 69, 69]),
 ('bernoulli', 'random.bernoulli(random.key(5), 0.3, (10,))', 'bool', (10,),
  [False, False, False, True, False, False, True, True, True, False]),
 ('permutation', 'random.permutation(random.key(5), 10)', 'int32', (10,),
  [9, 0, 2, 4, 8, 1, 3, 5, 7, 6]),
 ('normal_150x100_sum',
  'float(np.asarray(random.normal(random.split(random.key(1701))[0], (150, 100))).sum())',
  'float32', (), [126.411865234375]),
 ('normal_1M_first8', 'np.asarray(random.normal(random.key(1701), (1_000_000,)))[:8]',
  'float32', (8,),
  [-0.6472411155700684, 0.3156411051750183, -0.7491047382354736, -1.167362093925476,
   -0.01169903390109539, 1.7437922954559326, -1.5497627258300781, -1.0837270021438599]),
 ('key_neg', 'random.key_data(random.key(-1))', 'uint32', (2,), [0, 4294967295]),
 ('key_big', 'random.key_data(random.key(2**40 + 7))', 'uint32', (2,), [0, 7]),
 ('split_shape', 'random.key_data(random.split(random.key(3), (2, 3)))', 'uint32', (2, 3, 2),
  [[[3716834203, 3481239269], [1946498123, 2217676430], [1024511538, 2603795180]],
   [[877192987, 3448417067], [1363109171, 377266333], [2464363587, 131619366]]]),
 ('fold_big', 'random.key_data(random.fold_in(random.key(3), 4000000000))', 'uint32', (2,),
  [3722906176, 31111236]),
 ('bits_u8', 'random.bits(random.key(9), (12,), np.uint8)', 'uint8', (12,),
  [88, 232, 189, 73, 4, 94, 212, 100, 119, 115, 24, 24]),
 ('bits_u16', 'random.bits(random.key(9), (2, 3), np.uint16)', 'uint16', (2, 3),
  [[28248, 9960, 27069], [56649, 8964, 38750]]),
 ('uniform_f16', 'random.uniform(random.key(4), (6,), np.float16, -3., 2.)', 'float16', (6,),
  [-0.45703125, -0.7890625, -0.9140625, -1.37890625, 1.4453125, 1.8046875]),
 ('uniform_arr',
  ('random.uniform(random.key(4), (2, 4), minval=np.array([0., 1., 2., 3.], np.float32), '
   'maxval=10.)'),
  'float32', (2, 4),
  [[8.805466651916504, 7.928999900817871, 3.1202898025512695, 7.416904449462891],
   [5.013562202453613, 6.339212894439697, 3.9503183364868164, 9.241767883300781]]),
 ('uniform_fma', 'random.uniform(random.key(4), (8,), minval=-1.5, maxval=3.25)', 'float32', (8,),
  [2.6825966835021973, 2.1569721698760986, -0.8348278999328613, 1.4971851110458374,
   0.8814421892166138, 1.317917823791504, -0.34199848771095276, 2.735485076904297]),
 ('normal_f16', 'random.normal(random.key(11), (6,), np.float16)', 'float16', (6,),
  [-0.447021484375, 0.1505126953125, -0.16162109375, 0.6123046875, -0.6044921875, -1.5986328125]),
 ('normal_c64', 'random.normal(random.key(11), (3,), np.complex64)', 'complex64', (3,),
  [[-0.21911518275737762, 0.1981048285961151], [-0.4051626920700073, -2.769639730453491],
   [1.424456238746643, 0.0038494067266583443]]),
 ('randint_neg', 'random.randint(random.key(5), (8,), -1000, 7)', 'int32', (8,),
  [-224, -347, -722, -776, -116, -463, -486, -935]),
 ('randint_full', 'random.randint(random.key(5), (6,), -2**31, 2**31 - 1)', 'int32', (6,),
  [-1787507967, -1163020224, -1664956169, -994140664, -1625109188, -191201739]),
 ('randint_u8', 'random.randint(random.key(5), (8,), 0, 256, np.uint8)', 'uint8', (8,),
  [1, 64, 247, 8, 60, 53, 155, 221]),
 ('randint_empty', 'random.randint(random.key(5), (4,), 5, 5)', 'int32', (4,), [5, 5, 5, 5]),
 ('randint_arr',
  'random.randint(random.key(5), (2, 3), np.array([0, 10, 100]), np.array([5, 20, 1000]))',
  'int32', (2, 3), [[1, 18, 103], [1, 14, 701]]),
 ('bern_arr', 'random.bernoulli(random.key(6), np.array([0.1, 0.5, 0.9], np.float32), (4, 3))',
  'bool', (4, 3),
  [[False, True, True], [False, False, True], [False, True, True], [False, True, True]]),
 ('bern_high', "random.bernoulli(random.key(6), 0.3, (10,), mode='high')", 'bool', (10,),
  [False, True, True, True, False, False, False, True, False, False]),
 ('perm_arr2d',
  'random.permutation(random.key(7), np.arange(20, dtype=np.int32).reshape(4, 5), axis=1)',
  'int32', (4, 5),
  [[4, 2, 3, 0, 1], [9, 7, 8, 5, 6], [14, 12, 13, 10, 11], [19, 17, 18, 15, 16]]),
 ('perm_indep',
  ('random.permutation(random.key(7), np.arange(20, dtype=np.int32).reshape(4, 5), axis=1, '
   'independent=True)'),
  'int32', (4, 5),
  [[4, 2, 3, 0, 1], [9, 5, 7, 6, 8], [10, 12, 11, 14, 13], [17, 16, 19, 18, 15]]),
 ('choice_int', 'random.choice(random.key(8), 10, (5,))', 'int32', (5,), [3, 9, 7, 7, 8]),
 ('choice_noreplace', 'random.choice(random.key(8), 10, (5,), replace=False)', 'int32', (5,),
  [4, 5, 7, 3, 9]),
 ('choice_arr_axis1',
  'random.choice(random.key(8), np.arange(12, dtype=np.int32).reshape(3, 4), (2,), axis=1)',
  'int32', (3, 2), [[3, 1], [7, 5], [11, 9]]),
 ('choice_p',
  'random.choice(random.key(8), 5, (10,), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32))',
  'int32', (10,), [3, 4, 0, 1, 4, 4, 3, 0, 4, 4]),
 ('choice_p_noreplace',
  ('random.choice(random.key(8), 5, (3,), replace=False, p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], '
   'np.float32))'),
  'int32', (3,), [2, 3, 4]),
 ('trunc', 'random.truncated_normal(random.key(10), -1., 2., (8,))', 'float32', (8,),
  [-0.8746433258056641, -0.1045503318309784, 0.44351664185523987, 0.21038943529129028,
   -0.04662830010056496, -0.917022168636322, 0.8541620373725891, 0.5549548268318176]),
 ('trunc_arr', 'random.truncated_normal(random.key(10), np.array([-3., 0., 1.], np.float32), 3.)',
  'float32', (3,), [-1.743600606918335, 0.4748980402946472, 1.5535821914672852]),
 ('cat', 'random.categorical(random.key(12), np.array([[0., 1., 2.], [3., 2., 1.]], np.float32))',
  'int32', (2,), [2, 0]),
 ('cat_axis0',
  'random.categorical(random.key(12), np.array([[0., 1., 2.], [3., 2., 1.]], np.float32), axis=0)',
  'int32', (3,), [1, 1, 0]),
 ('cat_shape',
  'random.categorical(random.key(12), np.array([0., 1., 2., -1.], np.float32), shape=(3, 5))',
  'int32', (3, 5), [[2, 2, 2, 1, 2], [2, 2, 2, 2, 2], [2, 2, 2, 2, 2]]),
 ('cat_noreplace',
  ('random.categorical(random.key(12), np.array([[0., 1., 2., 0.5], [3., 2., 1., 0.]], '
   'np.float32), shape=(3, 2), replace=False)'),
  'int32', (3, 2), [[2, 2], [1, 0], [0, 3]]),
 ('gumbel', 'random.gumbel(random.key(13), (6,))', 'float32', (6,),
  [2.4870529174804688, -0.018130410462617874, 2.1798410415649414, 2.758119583129883,
   0.39195552468299866, 1.4195120334625244]),
 ('gumbel_high', "random.gumbel(random.key(13), (6,), mode='high')", 'float32', (6,),
  [-0.9275638461112976, 0.802561342716217, -0.8046161532402039, -1.0259188413619995,
   0.3412674367427826, -0.43047797679901123])]

JAX_DIGESTS = [('bits_big', 'random.bits(random.key(9), (100003,))', 'uint32', (100003,),
  '2762fa9648340642946f06953f492340ad1e7d16d72ce4a6eabe8c079e8f1e3f'),
 ('uniform_big', 'random.uniform(random.key(4), (70001,), minval=-1.5, maxval=3.25)', 'float32',
  (70001,), '6eb57fef6c749234e98457caf25f65b9312d067b3bde4698a7149a3c46518a90'),
 ('normal_big', 'random.normal(random.key(11), (200003,))', 'float32', (200003,),
  'c34a53468b72814b3f1cd9c21bb6b291e92c867162a031d879b7d8d9ec909f9f'),
 ('randint_big', 'random.randint(random.key(5), (100000,), 0, 1000)', 'int32', (100000,),
  'c597c9c61e38586c36c511e7dcb6580053a4384ad3ee6f7a55f7a828ef241cd8'),
 ('perm_big', 'random.permutation(random.key(7), 100000)', 'int32', (100000,),
  '9ce3a8ff78c4003b5cb8d964cfe2cbeb0b6620d389b2b7b99597dc0eab7d6efe')]


def _expected(dtype: str, shape: tuple, values: list) -> np.ndarray:
    if dtype.startswith("complex"):
        values = [complex(re, im) for re, im in values]
    return np.array(values, dtype=dtype).reshape(shape)


def _evaluate(expr: str) -> np.ndarray:
    return np.asarray(eval(expr, {"random": random, "np": np}))


@pytest.mark.parametrize("name, expr, dtype, shape, values", JAX_CASES,
                         ids=[case[0] for case in JAX_CASES])
def test_matches_jax(name, expr, dtype, shape, values):
    actual, expected = _evaluate(expr), _expected(dtype, shape, values)
    if name.endswith("_sum"):  # the sum's own rounding depends on the summation order
        np.testing.assert_allclose(actual, expected, rtol=1e-5)
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.tobytes() == expected.tobytes(), f"{actual.ravel()[:6]} != {expected.ravel()[:6]}"


@pytest.mark.parametrize("name, expr, dtype, shape, digest", JAX_DIGESTS,
                         ids=[case[0] for case in JAX_DIGESTS])
def test_large_outputs_match_jax(name, expr, dtype, shape, digest):
    actual = np.ascontiguousarray(_evaluate(expr))
    assert actual.dtype == np.dtype(dtype) and actual.shape == shape
    assert hashlib.sha256(actual.tobytes()).hexdigest() == digest


def test_reference_path_gives_the_same_samples(monkeypatch):
    key = random.key(11)
    fast = [np.asarray(f(key)) for f in SAMPLERS]
    monkeypatch.setattr(threefry, "NATIVE_MIN_SIZE", 1 << 62)
    slow = [np.asarray(f(key)) for f in SAMPLERS]
    for a, b in zip(fast, slow):
        assert a.tobytes() == b.tobytes()


SAMPLERS = [
    lambda k: random.normal(k, (1000,)),
    lambda k: random.uniform(k, (7, 9), minval=-3.0, maxval=0.5),
    lambda k: random.randint(k, (500,), -7, 300),
    lambda k: random.bits(k, (33,), np.uint16),
    lambda k: random.permutation(k, 257),
    lambda k: random.key_data(random.split(k, 5)),
    lambda k: random.key_data(random.fold_in(k, 99)),
]


# --------------------------------------------------------------------------------------------
# Keys


def test_typed_and_raw_keys():
    typed, raw = random.key(0), random.PRNGKey(0)
    assert isinstance(typed, random.PRNGKeyArray) and typed.shape == () and typed.ndim == 0
    assert isinstance(raw, redraft.Array) and raw.shape == (2,) and raw.dtype == np.uint32
    assert np.asarray(random.key_data(typed)).tolist() == np.asarray(raw).tolist() == [0, 0]
    assert repr(typed).startswith("Array((), dtype=key<fry>) overlaying:")
    keys = random.split(typed, 3)
    assert isinstance(keys, random.PRNGKeyArray) and keys.shape == (3,) and len(keys) == 3
    raw_keys = random.split(raw, 3)
    assert isinstance(raw_keys, redraft.Array) and raw_keys.shape == (3, 2)
    assert np.asarray(random.key_data(keys)).tolist() == np.asarray(raw_keys).tolist()


def test_key_arrays_index_iterate_and_unpack():
    keys = random.split(random.key(1701), (2, 3))
    k1, k2 = random.split(random.key(1701))
    assert isinstance(k1, random.PRNGKeyArray) and k1.shape == k2.shape == ()
    data = np.asarray(random.key_data(keys))
    assert np.asarray(random.key_data(keys[1])).tolist() == data[1].tolist()
    assert np.asarray(random.key_data(keys[1, 2])).tolist() == data[1, 2].tolist()
    assert np.asarray(random.key_data(keys[:, 0])).tolist() == data[:, 0].tolist()
    assert np.asarray(random.key_data(keys[..., 1])).tolist() == data[..., 1, :].tolist()
    assert [k.shape for k in keys] == [(3,), (3,)]
    assert keys.reshape(6).shape == (6,) and keys.ravel().shape == (6,)
    assert np.asarray(keys[0] == keys[0]).all() and not np.asarray(keys[0] == keys[1]).any()
    with pytest.raises(TypeError, match="len"):
        len(k1)
    with pytest.raises(TypeError, match="iteration"):
        iter(k1)
    with pytest.raises(IndexError):
        keys[0, 0, 0]


def test_wrap_key_data_round_trip_and_samplers_accept_both_forms():
    key = random.key(42)
    again = random.wrap_key_data(random.key_data(key))
    raw = random.PRNGKey(42)
    for sample in (lambda k: random.normal(k, (4,)), lambda k: random.randint(k, (4,), 0, 9)):
        assert np.asarray(sample(key)).tolist() == np.asarray(sample(again)).tolist()
        assert np.asarray(sample(key)).tolist() == np.asarray(sample(raw)).tolist()
    assert isinstance(random.fold_in(key, 3), random.PRNGKeyArray)
    assert isinstance(random.fold_in(raw, 3), redraft.Array)


def test_seeds_follow_jax_32_bit_rules():
    assert np.asarray(random.PRNGKey(np.int32(-2))).tolist() == [0, 4294967294]
    assert np.asarray(random.PRNGKey(np.uint32(2**31 + 101))).tolist() == [0, 2147483749]
    assert np.asarray(random.PRNGKey(np.int64(-3))).tolist() == [0, 4294967293]
    assert np.asarray(random.PRNGKey(random.PRNGKey(7)[1])).tolist() == [0, 7]


# --------------------------------------------------------------------------------------------
# Statistics (10**5 samples: a few standard errors of slack, seeds fixed)

N = 100_000


def test_normal_moments():
    x = np.asarray(random.normal(random.key(0), (N,)), np.float64)
    assert abs(x.mean()) < 0.015 and abs(x.std() - 1) < 0.015
    assert abs(np.mean(np.abs(x) < 1) - 0.6827) < 0.01
    assert np.isfinite(x).all()


def test_uniform_range_and_moments():
    x = np.asarray(random.uniform(random.key(1), (N,), minval=-2.0, maxval=3.0))
    assert x.dtype == np.float32 and x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.03 and abs(x.var() - 25 / 12) < 0.05
    half = np.asarray(random.uniform(random.key(1), (1000,), np.float16))
    assert half.dtype == np.float16 and half.min() >= 0 and half.max() < 1


def test_randint_bounds_and_coverage():
    x = np.asarray(random.randint(random.key(2), (N,), -3, 7))
    assert x.dtype == np.int32 and x.min() == -3 and x.max() == 6
    counts = np.bincount(x + 3)
    assert counts.min() > 0.09 * N and counts.max() < 0.11 * N
    small = np.asarray(random.randint(random.key(2), (1000,), 0, 256, np.uint8))
    assert small.dtype == np.uint8 and small.max() > 200
    assert np.asarray(random.randint(random.key(2), (5,), 4, 4)).tolist() == [4] * 5


def test_bernoulli_rate():
    for p in (0.05, 0.5, 0.9):
        x = np.asarray(random.bernoulli(random.key(3), p, (N,)))
        assert x.dtype == np.bool_ and abs(x.mean() - p) < 0.01
    ps = np.array([0.1, 0.9], np.float32)
    x = np.asarray(random.bernoulli(random.key(3), ps, (N // 2, 2)))
    assert np.allclose(x.mean(axis=0), ps, atol=0.01)


def test_permutation_is_a_permutation():
    for n in (0, 1, 2, 10, 1000):
        perm = np.asarray(random.permutation(random.key(4), n))
        assert perm.dtype == np.int32 and sorted(perm.tolist()) == list(range(n))
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    columns = np.asarray(random.permutation(random.key(4), x, axis=1))
    order = np.argsort(columns[0])
    assert (np.argsort(columns, axis=1) == order).all()  # one column order for every row
    assert (np.sort(columns, axis=1) == x).all()
    indep = np.asarray(random.permutation(random.key(4), x, axis=1, independent=True))
    assert all(sorted(r.tolist()) == o.tolist() for r, o in zip(indep, x))


def test_choice():
    x = np.asarray(random.choice(random.key(5), 50, (20,), replace=False))
    assert len(set(x.tolist())) == 20 and x.max() < 50
    p = np.array([0.1, 0.2, 0.7], np.float32)
    draws = np.asarray(random.choice(random.key(5), 3, (N,), p=p))
    assert np.allclose(np.bincount(draws, minlength=3) / N, p, atol=0.01)
    pool = np.arange(12, dtype=np.int32).reshape(3, 4)
    picked = np.asarray(random.choice(random.key(5), pool, (2, 5), axis=1))
    assert picked.shape == (3, 2, 5) and (picked % 4 == picked[0][None] % 4).all()
    uniform_p = np.full(5, 0.2, np.float32)
    unique = np.asarray(random.choice(random.key(5), 5, (5,), replace=False, p=uniform_p))
    assert sorted(unique.tolist()) == list(range(5))


def test_categorical_frequencies():
    logits = np.log(np.array([0.2, 0.3, 0.5], np.float32))
    draws = np.asarray(random.categorical(random.key(6), logits, shape=(N,)))
    assert draws.dtype == np.int32
    assert np.allclose(np.bincount(draws, minlength=3) / N, [0.2, 0.3, 0.5], atol=0.01)
    batch = np.asarray(random.categorical(random.key(6), np.zeros((4, 7), np.float32)))
    assert batch.shape == (4,) and batch.max() < 7


def test_truncated_normal_bounds_and_mean():
    x = np.asarray(random.truncated_normal(random.key(7), -1.0, 2.0, (N,)))
    assert x.dtype == np.float32 and x.min() > -1.0 and x.max() < 2.0
    # mean of a standard normal truncated to (a, b): (pdf(a) - pdf(b)) / (cdf(b) - cdf(a))
    pdf = lambda v: math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
    cdf = lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2)))
    assert abs(x.mean() - (pdf(-1) - pdf(2)) / (cdf(2) - cdf(-1))) < 0.01


def test_gumbel_mean():
    x = np.asarray(random.gumbel(random.key(8), (N,)), np.float64)
    assert abs(x.mean() - 0.5772) < 0.02


def test_shuffle_is_deprecated_independent_permutation():
    x = np.arange(10, dtype=np.int32)
    with pytest.warns(DeprecationWarning, match="permutation"):
        shuffled = np.asarray(random.shuffle(random.key(9), x))
    expected = np.asarray(random.permutation(random.key(9), x, independent=True))
    assert shuffled.tolist() == expected.tolist()


def test_results_are_redraft_arrays():
    key = random.key(10)
    for result in (random.normal(key, (3,)), random.uniform(key), random.bits(key, (2,)),
                   random.randint(key, (2,), 0, 5), random.bernoulli(key),
                   random.permutation(key, 4), random.choice(key, 4, (2,)),
                   random.categorical(key, np.zeros(3, np.float32)),
                   random.truncated_normal(key, -1.0, 1.0, (2,)), random.PRNGKey(1)):
        assert isinstance(result, redraft.Array)
    assert random.normal(key).shape == ()


# --------------------------------------------------------------------------------------------
# Errors name what was wrong


@pytest.mark.parametrize("call, error, message", [
    (lambda: random.normal(0, (3,)), TypeError, "expected a PRNG key"),
    (lambda: random.normal(np.array([1.0, 2.0]), (3,)), TypeError, "dtype uint32"),
    (lambda: random.normal(np.zeros(3, np.uint32), (3,)), TypeError, r"shape ending in \(2,\)"),
    (lambda: random.normal(random.split(random.key(0), 2), (3,)), ValueError, "single key"),
    (lambda: random.split(random.PRNGKey(0)[None], 2), ValueError, "single key"),
    (lambda: random.normal(random.key(0), 3), TypeError, r"write \(3,\)"),
    (lambda: random.normal(random.key(0), (-1,)), ValueError, "nonnegative"),
    (lambda: random.normal(random.key(0), (2,), np.int32), ValueError, "float"),
    (lambda: random.uniform(random.key(0), (3,), minval=np.zeros(4)), ValueError,
     "broadcast-compatible"),
    (lambda: random.bits(random.key(0), (2,), np.float32), ValueError, "unsigned"),
    (lambda: random.randint(random.key(0), (2,), 0, 5, np.float32), ValueError, "integer"),
    (lambda: random.randint(random.key(0), (2,), np.zeros(3, np.int32), 5), ValueError,
     "broadcast-compatible"),
    (lambda: random.bernoulli(random.key(0), 1), TypeError, "floating dtype"),
    (lambda: random.choice(random.key(0), 5, (2,), p=np.ones(4) / 4), ValueError,
     "p has shape"),
    (lambda: random.choice(random.key(0), 3, (5,), replace=False), ValueError,
     "larger sample"),
    (lambda: random.choice(random.key(0), 3, 5), TypeError, "sequence"),
    (lambda: random.permutation(random.key(0), 2.5), TypeError, "integer or at least"),
    (lambda: random.categorical(random.key(0), np.zeros(3, np.int32)), TypeError, "floating"),
    (lambda: random.key(1.5), TypeError, "must be an integer"),
    (lambda: random.key(np.arange(2)), TypeError, "scalar seed"),
    (lambda: random.key(random.key(0)), TypeError, "PRNG key"),
    (lambda: random.key(2**64), OverflowError, "64-bit"),
    (lambda: random.fold_in(random.key(0), np.arange(2)), TypeError, "scalar"),
    (lambda: random.fold_in(random.key(0), 1.5), TypeError, "integer"),
    (lambda: random.wrap_key_data(np.zeros(2, np.int32)), TypeError, "uint32"),
    (lambda: np.asarray(random.key(0)), TypeError, "key_data"),
])
def test_bad_input_is_reported(call, error, message):
    with pytest.raises(error, match=message):
        call()
