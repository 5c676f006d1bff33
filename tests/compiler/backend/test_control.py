"""cond / while / for lowered to branches and loops; loop state in place and swapped;
elementwise for-loops interchanged; debug_print calling back into Python."""
import numpy as np
from backend_util import check, compiled, sample

import redraft.numpy as jnp
from redraft import lax


def test_cond_on_array_value():
    def f(x):
        if x.sum() > 0:
            y = x * 2.0
        else:
            y = jnp.exp(x) - 1.0
        return y, y.mean()
    x = sample((40,), np.float32, low=0.5, high=2)
    check(f, x, rtol=2e-6)
    check(f, -x, rtol=2e-6)


def test_cond_yielding_outer_values_and_scalars():
    def f(x, y):
        if x[0] > y[0]:
            a = y
            b = x[0]
        else:
            a = x
            b = y[1]
        return a, b
    x, y = sample((6,), np.float32, seed=1), sample((6,), np.float32, seed=2)
    check(f, x, y)
    check(f, y, x)


def test_while_on_array_value():
    def f(x):
        n = 0
        while x.max() < 100.0:
            x = x * 1.5 + 1.0
            n = n + 1
        return x, n
    check(f, sample((30,), np.float32, low=0, high=1), rtol=2e-6)


def test_while_swap_state():
    def f(a, b):
        i = 0
        while i < 5:
            a, b = b, a + b
            i = i + 1
        return a, b
    check(f, sample((4, 3), np.float32, seed=1), sample((4, 3), np.float32, seed=2))


def test_for_loop_interchanged():
    def decay(x):
        for i in range(10):
            x -= 0.1 * x
        return x
    check(decay, sample((300, 300), np.float32), rtol=2e-6)


def test_for_loop_with_index_and_outer_values():
    def f(x, w):
        for i in range(7):
            x = x * w + i * 0.5
        return x
    check(f, sample((9, 5), np.float32), sample((5,), np.float32, seed=1), rtol=2e-6)


def test_for_loop_with_reduction_in_body():
    def f(x):
        total = jnp.zeros(())
        for i in range(6):
            x = x / (1.0 + x.sum() ** 2)
            total = total + x.max()
        return x, total
    check(f, sample((50,), np.float32, low=0, high=1), rtol=1e-5)


def test_nested_loops_and_branches():
    def f(x):
        acc = jnp.zeros_like(x)
        for i in range(3):
            j = 0
            while j < 4:
                if (x * j).sum() > 1.0:
                    acc = acc + x * j
                else:
                    acc = acc - 1.0
                j = j + 1
        return acc
    check(f, sample((8,), np.float32, low=0, high=1))


def test_loop_over_rows_with_matmul():
    def f(h, w):
        for i in range(3):
            h = jnp.tanh(h @ w)
        return h
    check(f, sample((20, 30), np.float32), sample((30, 30), np.float32, seed=1) * 0.2,
          rtol=2e-5, atol=1e-6)


def test_print_calls_back(capsys):
    def f(x):
        y = x * 2.0
        print("y is", y, "and its sum", y.sum())
        return y + 1.0
    x = np.array([1.0, 2.5, -3.0], np.float32)
    out, used = compiled(f, x)
    assert used == "llvm"
    printed = capsys.readouterr().out
    _, used = compiled(f, x, backend="interpret")
    assert printed == capsys.readouterr().out
    assert "y is" in printed
    np.testing.assert_allclose(np.asarray(out), x * 2 + 1)


def test_print_in_loop_of_strided_view(capsys):
    def f(x):
        for i in range(2):
            x = x + 1.0
            print(i, x.T[1])
        return x
    x = sample((3, 4), np.float32)
    compiled(f, x)
    printed = capsys.readouterr().out
    compiled(f, x, backend="interpret")
    assert printed == capsys.readouterr().out


def test_loop_state_not_overwritten_while_read():
    """A branch computing the new state from a transposed read of the old one must not
    write the state in place."""
    def f(x):
        for i in range(3):
            if x.sum() > 0:
                x = x.T * 0.5 + 1.0
            else:
                x = x * 2.0
        return x
    check(f, sample((5, 5), np.float32, low=0.1, high=1))


def test_a_loop_writing_row_i_of_a_buffer_needs_no_copy_of_its_initial_value():
    """A for loop whose iteration i writes row i of a carried buffer (a scan's stacked
    outputs) starts from an uninitialised buffer (control.py: _rows_written_before_read);
    one that also reads the buffer, or writes fewer rows than it has, keeps the copy."""
    def f(x, ones):
        def step(c, v):
            c = jnp.sin(c) + v
            return c, c * 2.0
        _, ys = lax.scan(step, x[0], x)

        def reads_previous(i, buf):
            prev = lax.dynamic_index_in_dim(buf, jnp.maximum(i - 1, 0), 0, False)
            return lax.dynamic_update_index_in_dim(buf, prev + 1.0, i, 0)

        def partial(i, buf):
            return lax.dynamic_update_index_in_dim(buf, x[i] * 3.0, i, 0)
        return (ys, lax.fori_loop(0, x.shape[0], reads_previous, ones),
                lax.fori_loop(0, x.shape[0] - 2, partial, ones))

    x = sample((6, 5), np.float32, seed=11)
    check(f, x, np.ones((6, 5), np.float32), rtol=1e-5, atol=1e-6)
