"""dot_general through the matmul kernel (float products) and the loop nest (the rest)."""
import numpy as np
import pytest
from backend_util import check, sample

import redraft
import redraft.numpy as jnp
from redraft import lax


def matmul(a, b):
    return a @ b


@pytest.mark.parametrize("m,k,n", [(2, 3, 4), (64, 64, 64), (130, 70, 33), (128, 784, 10),
                                   (1, 50, 40), (40, 50, 1), (7, 1, 9), (300, 200, 257)])
def test_matmul_shapes(m, k, n):
    a, b = sample((m, k), np.float32, seed=1), sample((k, n), np.float32, seed=2)
    check(matmul, a, b, rtol=2e-5, atol=2e-6 * k)


def test_transposed_operands_use_strides():
    def f(a, b):
        return a.T @ b, a.T @ b.T, jnp.dot(b[:, :60], a.T[:, :30])
    a, b = sample((90, 60), np.float32, seed=1), sample((90, 90), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-5)


def test_transposed_products_and_constant_operands():
    """(A @ B).T is computed as B.T @ A.T (fold), also when an operand is a uniform constant
    that must be laid out transposed (the zero initial state of an RNN's gradient)."""
    def f(a, b):
        zeros = jnp.zeros((32, 128), jnp.float32)
        twos = jnp.full((128, 32), 2.0, jnp.float32)
        return (a @ b).T, (zeros @ b).T, (twos.T @ b).T + (twos.T @ b.T).T
    a, b = sample((32, 128), np.float32, seed=1), sample((128, 128), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-4)


def test_vector_products():
    def f(v, m):
        return jnp.dot(v, v), m @ v, v @ m.T
    check(f, sample((70,), np.float32), sample((50, 70), np.float32, seed=1), rtol=2e-5,
          atol=2e-5)


def test_batched_dot_general():
    def f(a, b):
        return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    a, b = sample((3, 40, 50), np.float32, seed=1), sample((3, 50, 45), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-5)
    a, b = sample((4, 3, 5), np.float32, seed=3), sample((4, 5, 2), np.float32, seed=4)
    check(f, a, b, rtol=2e-5, atol=2e-5)


def test_multi_axis_contraction():
    def f(a, b):
        return lax.dot_general(a, b, (((1, 2), (2, 0)), ((), ())))
    a, b = sample((30, 4, 5), np.float32, seed=1), sample((5, 40, 4), np.float32, seed=2)
    check(f, a, b, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_integer_and_bool_dot(dtype):
    check(matmul, sample((6, 7), dtype, seed=1), sample((7, 5), dtype, seed=2))


def test_large_threaded_matmul():
    a, b = sample((256, 300), np.float32, seed=1), sample((300, 270), np.float32, seed=2)
    check(matmul, a, b, rtol=2e-5, atol=5e-5)


def _reference(a, b, layout):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return (a64.T if layout[0] == "T" else a64) @ (b64.T if layout[1] == "T" else b64)


def _operands(layout: str, m: int, k: int, n: int, seeds: tuple[int, int]):
    """float32 A and B stored as `layout` says ("NT": B transposed) for an m x k x n product."""
    a_shape = (k, m) if layout[0] == "T" else (m, k)
    b_shape = (n, k) if layout[1] == "T" else (k, n)
    return sample(a_shape, np.float32, seed=seeds[0]), sample(b_shape, np.float32, seed=seeds[1])


def _product(layout: str):
    """The product of operands stored as `layout` says, read through their transposes."""
    def f(x, y):
        return (x.T if layout[0] == "T" else x) @ (y.T if layout[1] == "T" else y)
    return f


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("m,k,n", [(128, 784, 1024), (37, 301, 517), (12, 1000, 520)])
def test_short_wide_products_in_every_layout(layout, m, k, n):
    """Short A, wide B (a training batch times a weight matrix): all four layouts, sizes
    that leave partial panels, tiles and k blocks, against NumPy in float64."""
    a, b = _operands(layout, m, k, n, seeds=(3, 4))
    got = np.asarray(redraft.jit(_product(layout))(a, b))
    np.testing.assert_allclose(got, _reference(a, b, layout), rtol=1e-4, atol=1e-4 * k ** 0.5)


@pytest.mark.parametrize("m,k,n", [(128, 10, 1024), (128, 1024, 1024), (30, 23, 300),
                                   (20, 1, 64)])
def test_products_with_a_transposed_weight(m, k, n):
    """`g @ w.T` (the backward pass of a dense layer): B packed from its columns, K below
    one vector (all of it read by masked loads), K not a multiple of a vector, and a
    1024 x 1024 weight (a 4 KiB stride, split by columns over threads); its products on
    both sides of the threading threshold, against NumPy in float64."""
    g, w = sample((m, k), np.float32, seed=21), sample((n, k), np.float32, seed=22)
    got = np.asarray(redraft.jit(lambda x, y: x @ y.T)(g, w))
    np.testing.assert_allclose(got, _reference(g, w, "NT"), rtol=1e-4, atol=1e-4 * k ** 0.5)


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("m,k,n", [(128, 1024, 10), (1024, 128, 10), (130, 77, 3),
                                   (45, 3000, 16), (33, 400, 2)])
def test_narrow_products_in_every_layout(layout, m, k, n, monkeypatch):
    """N = 10 classes and the like: the kernel's narrow variants (dot products along k for
    A by rows, vectors down the rows of C for A by columns; K = 3000 takes the packed path),
    ragged row blocks and k tails, on one thread and split over the pool."""
    from redraft.compiler.backend.llvm import dot
    used = []
    real = dot._kernel_product
    monkeypatch.setattr(dot, "_kernel_product",
                        lambda *args, **kw: used.append(args[6]) or real(*args, **kw))
    a, b = _operands(layout, m, k, n, seeds=(5, 6))
    got = np.asarray(redraft.jit(_product(layout))(a, b))
    assert used == [(m, n, k)]
    np.testing.assert_allclose(got, _reference(a, b, layout), rtol=1e-4, atol=1e-4 * k ** 0.5)


def test_short_wide_product_with_bias_and_tanh_and_batch():
    """The layer `tanh(x @ w + b)` and a batched short-wide product, against NumPy."""
    x, w = sample((40, 333), np.float32, seed=5), sample((333, 700), np.float32, seed=6)
    bias = sample((700,), np.float32, seed=7)
    got = np.asarray(redraft.jit(lambda x, w, c: jnp.tanh(x @ w + c))(x, w, bias))
    want = np.tanh(x.astype(np.float64) @ w + bias)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    xs, ws = sample((3, 20, 150), np.float32, seed=8), sample((3, 150, 900), np.float32, seed=9)
    got = np.asarray(redraft.jit(lambda p, q: jnp.matmul(p, q))(xs, ws))
    np.testing.assert_allclose(got, np.matmul(xs.astype(np.float64), ws), rtol=1e-4, atol=1e-3)


def test_exit_while_the_matmul_kernel_compiles_is_clean():
    """A process that exits while the background matmul compile runs waits for it (LLVM
    torn down under the compiling thread used to abort or crash it)."""
    import subprocess
    import sys
    script = ("import sys, time\n"
              "from redraft.compiler.backend.llvm.dot import warm_up\n"
              "warm_up(); time.sleep(float(sys.argv[1]))\n")
    for delay in ("0.05", "0.1", "0.15", "0.2"):
        done = subprocess.run([sys.executable, "-c", script, delay], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, (delay, done.returncode, done.stderr[-2000:])


RNN_STEP = '''
import numpy as np
import redraft
import redraft.numpy as jnp
from redraft import lax


def loss(params, xs, target):
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(jnp.dot(x, wx) + jnp.dot(h, wh) + b)
        return h, h

    h, _ = lax.scan(cell, jnp.zeros((32, 128), xs.dtype), xs)
    return jnp.mean((h - target) ** 2)


rng = np.random.default_rng(0)
params = [rng.standard_normal((64, 128), dtype=np.float32) * 0.1,
          rng.standard_normal((128, 128), dtype=np.float32) * 0.1, np.zeros(128, np.float32)]
xs = rng.standard_normal((50, 32, 64), dtype=np.float32)
target = rng.standard_normal((32, 128), dtype=np.float32) * 0.5
grads = redraft.jit(redraft.grad(loss))(params, xs, target)
print(sum(float(np.abs(np.asarray(g)).sum()) for g in grads))
'''


def test_rnn_gradient_fits_the_stack_when_loaded_from_the_cache(tmp_path):
    """Each product's task keeps its A-packing buffer in its own stack frame: inlined into
    the gradient of a scan (products unrolled), those buffers once added up past the main
    thread's 8 MB stack and the cached library crashed."""
    import os
    import subprocess
    import sys
    script = tmp_path / "rnn.py"
    script.write_text(RNN_STEP)
    env = dict(os.environ, REDRAFT_CACHE="1", REDRAFT_CACHE_DIR=str(tmp_path / "cache"))
    printed = []
    for _ in range(2):  # compiled and saved, then loaded from the cache
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
        printed.append(done.stdout.strip())
    assert printed[0] == printed[1]


def test_products_sharing_a_right_operand_pack_it_once():
    """Products in one block by the same right operand in the same layout share one packed
    copy of it (compiler/backend/llvm/dot.py): forward and transposed uses, uses inside a
    loop body whose operand is carried, and uses in both arms of a run-time `if`."""
    def f(w, xs, flag):
        h = xs[0] @ w
        outs = [h]
        for i in range(1, 4):
            h = jnp.tanh(xs[i] @ w + h @ w.T)  # w in two layouts: two packings
            outs.append(h @ w)
        return outs

    def g(w, x, flag):
        def body(carry):
            i, m, acc = carry
            return i + 1, m * 0.5 + 0.1, acc + (x @ m) + (acc @ m)  # m changes every iteration
        _, m, acc = lax.while_loop(lambda c: c[0] < flag * flag * 3.0, body, (0.0, w, x))
        if flag > 0:
            acc = acc @ w + x @ w
        else:
            acc = acc @ w - x @ w
        return acc

    w = sample((48, 48), np.float32, seed=1)
    xs = sample((4, 40, 48), np.float32, seed=2)
    check(f, w, xs, np.float32(1.0), rtol=2e-4, atol=2e-4)
    for flag in (1.0, -1.0):
        check(g, w * 0.1, xs[0] * 0.1, np.float32(flag), rtol=2e-4, atol=2e-4)


def test_products_in_a_loop_pack_a_loop_invariant_operand_in_the_first_iteration_only():
    """A product in a for loop's body whose right operand comes from outside the loop packs
    it in the first iteration and reuses the packing after (dot.py: _first_iteration); one
    whose operand the loop computes, or that sits in a branch inside the body, packs it each
    time. The loop runs twice (from two call sites) so the packing is redone per loop."""
    def f(w, v, xs, flag):
        def cell(h, x):
            h = jnp.tanh(x @ w + h @ w.T + h @ v)  # w in two layouts, both invariant
            m = h.T @ x  # the right operand changes every iteration
            return h, m.sum() + (h @ w)[0, 0]
        h, ys = lax.scan(cell, jnp.zeros((40, 48), jnp.float32), xs)
        h2, ys2 = lax.scan(cell, h * 0.5, xs[::-1])
        def branchy(i, h):
            return lax.cond(flag > 0, lambda q: jnp.tanh(q @ w), lambda q: q @ v, h)
        return h2, ys, ys2, lax.fori_loop(0, 3, branchy, h)

    w = sample((48, 48), np.float32, seed=3) * 0.2
    v = sample((48, 48), np.float32, seed=4) * 0.2
    xs = sample((5, 40, 48), np.float32, seed=5)
    for flag in (1.0, -1.0):
        check(f, w, v, xs, np.float32(flag), rtol=2e-4, atol=2e-4)


def test_the_matmul_kernel_compiles_only_once_a_product_needs_it():
    """The warm-up compiles the thread pool; the kernel's compile starts when staging
    records the first product that runs on it (a matrix-vector product does not)."""
    import subprocess
    import sys
    script = (
        "import numpy as np, redraft, redraft.numpy as jnp\n"
        "from redraft.compiler.backend.llvm import dot\n"
        "x, w = np.ones((512, 256), np.float32), np.ones(256, np.float32)\n"
        "redraft.jit(lambda a, b: jnp.tanh(a @ b))(x, w)\n"
        "print(sorted(dot._KERNELS))\n"
        "redraft.jit(lambda a, b: a @ b)(x, x.T)\n"
        "print(sorted(dot._KERNELS))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ, "REDRAFT_CACHE": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["['runtime']", "['float32', 'runtime']"]


def _llvm_text(fn, *args):
    from redraft.compiler.backend.llvm import llvm_ir
    from redraft.jit import make_ir
    return llvm_ir(make_ir(fn)(*args), optimised=False)


@pytest.mark.parametrize("layout", ["NN", "TN"])
def test_square_product_with_a_small_left_operand_splits_by_columns(layout):
    """512 x 512 @ 512 x 512 (A: 1 MB, 16 panels of columns): with two threads or more, each
    takes its own columns and packs all of A rather than reading a shared packed B."""
    from redraft.compiler.backend.llvm import dot
    if dot.thread_count() < 2:
        pytest.skip("one thread: the product is not split")
    a, b = sample((512, 512), np.float32, seed=14), sample((512, 512), np.float32, seed=15)

    def f(x, y):
        return (x.T if layout[0] == "T" else x) @ y

    assert "redraft_dot_cols" in _llvm_text(f, a, b)
    got = np.asarray(redraft.jit(f)(a, b))
    np.testing.assert_allclose(got, _reference(a, b, layout), rtol=1e-4,
                               atol=1e-4 * 512 ** 0.5)


@pytest.mark.parametrize("threads,total,most,unit,size", [
    (2, 1000, 288, 12, 252),   # four chunks, two a thread (288-row chunks: 3 and 1 rows over)
    (2, 2000, 288, 12, 252),   # eight
    (2, 32, 32, 1, 16),        # one chunk a thread
    (2, 100, 32, 1, 25),       # 100 panels: four of 25, not three of 32 and one of 4
    (3, 24, 32, 1, 8),
    (1, 50, 32, 1, 25),
])
def test_threaded_chunks_give_every_thread_as_many(monkeypatch, threads, total, most, unit,
                                                    size):
    from redraft.compiler.backend.llvm import dot
    monkeypatch.setattr(dot, "thread_count", lambda: threads)
    assert dot._even_chunk(total, most, unit) == size


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("m,k,n", [(128, 300, 1000), (37, 301, 517), (200, 33, 400)])
def test_few_rows_and_many_columns_split_by_columns(layout, m, k, n):
    """A threaded product with few rows and many columns splits C by columns, each chunk
    packing its own panels of B (dot.py: _splits_columns), ragged last panel and chunk
    included; a square one still splits by rows. Against NumPy in float64."""
    a_shape = (k, m) if layout[0] == "T" else (m, k)
    b_shape = (n, k) if layout[1] == "T" else (k, n)
    a, b = sample(a_shape, np.float32, seed=11), sample(b_shape, np.float32, seed=12)

    def f(x, y):
        return (x.T if layout[0] == "T" else x) @ (y.T if layout[1] == "T" else y)

    assert "redraft_dot_cols" in _llvm_text(f, a, b)
    got = np.asarray(redraft.jit(f)(a, b))
    np.testing.assert_allclose(got, _reference(a, b, layout), rtol=1e-4, atol=1e-4 * k ** 0.5)
    square = sample((300, 300), np.float32, seed=13)
    assert "redraft_dot_cols" not in _llvm_text(f, square, square)


def _epilogues(monkeypatch) -> list:
    """Record the consumers that products take as epilogues (dot.py -> epilogue.py)."""
    from redraft.compiler.backend.llvm import dot
    taken = []
    real = dot.take_epilogue

    def spy(L, eqn, dest, columns=0):
        epilogue = real(L, eqn, dest, columns)
        taken.append(None if epilogue is None else epilogue.eqn.prim.name)
        return epilogue

    monkeypatch.setattr(dot, "take_epilogue", spy)
    return taken


def test_weight_gradient_update_runs_as_the_products_epilogue(monkeypatch):
    """`w - lr * (x.T @ g)` and `tanh(x @ w + b)` (bias broadcast: a nest kept by rows, its
    rows 70 long, not whole vectors; two results) run on each chunk of the product's rows
    (epilogue.py), with row counts that are not multiples of the tile's."""
    taken = _epilogues(monkeypatch)
    x, g = sample((300, 400), np.float32, seed=1), sample((300, 512), np.float32, seed=2)
    w = sample((400, 512), np.float32, seed=3)
    got = check(lambda x, g, w: w - 0.01 * (x.T @ g), x, g, w, rtol=1e-5, atol=1e-4,
                eager=False)
    np.testing.assert_allclose(got[0], w - 0.01 * (x.astype(np.float64).T @ g), rtol=1e-5,
                               atol=1e-4)
    assert "fused" in taken

    taken.clear()
    _check_tanh_layer(sample((301, 200), np.float32, seed=4),
                      sample((200, 70), np.float32, seed=5), sample((70,), np.float32, seed=6))
    assert "fused" in taken


def _check_tanh_layer(x, w, b) -> None:
    """jit of `tanh(x @ w + b)` and its derivative `1 - t * t` against NumPy."""
    def layer(x, w, b):
        t = jnp.tanh(x @ w + b)
        return t, 1.0 - t * t

    t, d = check(layer, x, w, b, rtol=1e-4, atol=1e-4, eager=False)
    want = np.tanh(x.astype(np.float64) @ w + b)
    np.testing.assert_allclose(t, want, rtol=1e-4, atol=5e-4)
    np.testing.assert_allclose(d, 1.0 - want * want, rtol=1e-4, atol=5e-4)


def test_epilogue_only_with_operands_that_exist_at_the_product(monkeypatch):
    """A consumer reading a later product's result runs as that product's epilogue, not the
    first's; values read between the product and its consumer, and an operand that dies at
    the consumer, keep their values (the consumer writes buffers of its own)."""
    taken = _epilogues(monkeypatch)

    def f(x, w1, w2, c):
        y = x @ w1
        z = x @ w2
        u = y @ w2.T           # reads y between the product and its consumer
        out = y * z + c * 2.0  # c dies here
        return out, u

    x = sample((290, 96), np.float32, seed=7)
    w1, w2 = sample((96, 160), np.float32, seed=8), sample((96, 160), np.float32, seed=9)
    c = sample((290, 160), np.float32, seed=10)
    out, u = check(f, x, w1, w2, c, rtol=1e-4, atol=1e-3, eager=False)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, (x64 @ w1) * (x64 @ w2) + 2 * c, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(u, (x64 @ w1) @ w2.T, rtol=1e-4, atol=1e-3)
    assert taken[:2] == [None, "fused"]


def _in_place_products(monkeypatch) -> list:
    """Record, per product with a kernel, whether it writes into its epilogue's result."""
    from redraft.compiler.backend.llvm import dot
    placed = []
    real = dot.epilogue_dest

    def spy(L, eqn):
        view = real(L, eqn)
        placed.append(view is not None)
        return view

    monkeypatch.setattr(dot, "epilogue_dest", spy)
    return placed


def test_product_that_dies_in_its_epilogue_is_written_into_the_epilogues_result(
        monkeypatch):
    """`w - lr * (x.T @ g)`: the product is written where the update's result goes and
    updated in place; kept apart where the product is read again (returned too) and where
    the epilogue's result is an intermediate read by a later product."""
    placed = _in_place_products(monkeypatch)
    x, g = sample((300, 400), np.float32, seed=11), sample((300, 512), np.float32, seed=12)
    w = sample((400, 512), np.float32, seed=13)
    want = x.astype(np.float64).T @ g
    got = check(lambda x, g, w: w - 0.01 * (x.T @ g), x, g, w, rtol=1e-5, atol=1e-4,
                eager=False)
    np.testing.assert_allclose(got[0], w - 0.01 * want, rtol=1e-5, atol=1e-4)
    assert placed == [True]

    placed.clear()

    def both(x, g, w):
        p = x.T @ g
        return w - 0.01 * p, p

    new, p = check(both, x, g, w, rtol=1e-5, atol=1e-4, eager=False)
    np.testing.assert_allclose(p, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(new, w - 0.01 * want, rtol=1e-5, atol=1e-4)
    assert placed == [False]

    placed.clear()
    w2 = sample((400, 64), np.float32, seed=14)

    def hidden(x, w, w2):
        return jnp.tanh(x @ w) @ w2

    got, = check(hidden, g, w.T, w2, rtol=1e-4, atol=1e-3, eager=False)
    np.testing.assert_allclose(got, np.tanh(g.astype(np.float64) @ w.T) @ w2, rtol=1e-4,
                               atol=1e-3)
    assert placed[0] is True


@pytest.mark.parametrize("n", [1024, 1000, 333])
def test_products_split_by_columns_run_their_epilogue_on_each_chunk_of_columns(
        monkeypatch, n):
    """`tanh(x @ w + b)` with few rows and many columns (the threads split C by columns,
    dot.py `_splits_columns`): bias, tanh and its derivative run on each chunk of columns
    just computed, every row, with column counts that end inside a vector."""
    from redraft.compiler.backend.llvm import dot
    taken = _epilogues(monkeypatch)
    x, w, b = (sample((128, 300), np.float32, seed=21), sample((300, n), np.float32, seed=22),
               sample((n,), np.float32, seed=23))
    assert dot._splits_columns(128, n, 300, np.dtype(np.float32))
    _check_tanh_layer(x, w, b)
    assert taken == ["fused"]


@pytest.mark.parametrize("m", [128, 300])
def test_operand_packed_in_a_loops_first_iteration_outlives_the_bodys_temporaries(m):
    """`fori_loop(..., lambda i, h: (h @ w.T) @ w, ...)`: the second product packs w in the
    first iteration only, into a buffer kept across iterations, which must not be the space
    the first product packed w.T into and freed (in iteration two that packing overwrote
    it: wrong numbers from the second iteration on, silently)."""
    x, w = sample((m, 200), np.float32, seed=31) * 0.1, sample((200, 256), np.float32,
                                                               seed=32) * 0.1

    def f(x, w):
        return lax.fori_loop(0, 3, lambda i, h: (h @ w.T) @ w, x @ w)

    got, = check(f, x, w, rtol=2e-3, atol=2e-3, eager=False)
    h = x.astype(np.float64) @ w
    for _ in range(3):
        h = (h @ w.T) @ w
    np.testing.assert_allclose(got, h, rtol=2e-3, atol=2e-3)
