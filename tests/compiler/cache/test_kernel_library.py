"""The kernel library across processes: one process builds it, the next loads it and computes
bit for bit what the pool and kernels compiled with MCJIT compute; a corrupt or unloadable
library, the switch off, a fork, one thread, and two builders at once all keep it correct.

Each case is a fresh process: the JIT decides once a process where its kernels come from,
and the suite's own process runs with the library off (tests/conftest.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from redraft.compiler.aot.link import c_compiler

pytestmark = pytest.mark.skipif(c_compiler() is None,
                                reason="the kernel library is linked with the system C compiler")

# An MLP step (products in every layout of its gradient, a narrow N = 10 one among them)
# and the eager kernels of both dtypes, in a sample of shapes and layouts.
WORK = r'''
import json, os, sys
import numpy as np
import redraft, redraft.numpy as jnp
from redraft.compiler.backend.llvm import parallel
from redraft.compiler.cache import kernel_library
from redraft.kernels.matmul import matmul_kernel


def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -jnp.mean(jnp.sum(y * (logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1,
                                                                 keepdims=True))), axis=1))


@redraft.jit
def update(params, x, y):
    grads = redraft.grad(loss)(params, x, y)
    return [(w - 0.01 * dw, b - 0.01 * db) for (w, b), (dw, db) in zip(params, grads)]


rng = np.random.default_rng(0)
sizes = [64, 96, 80, 10]
params = [(rng.standard_normal((m, n), dtype=np.float32) * 0.1, np.zeros(n, np.float32))
          for m, n in zip(sizes[:-1], sizes[1:])]
x = rng.standard_normal((48, 64), dtype=np.float32)
y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 48)]
out = {f"mlp{i}": np.asarray(leaf) for i, leaf in
       enumerate(l for pair in update(params, x, y) for l in pair)}
for dtype in ("float32", "float64"):
    for m, k, n in [(128, 300, 200), (40, 100, 10), (33, 70, 3), (20, 20, 20)]:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        out[f"{dtype}-{m}x{k}x{n}"] = matmul_kernel(dtype)(a, b)
        out[f"{dtype}-{m}x{k}x{n}-at"] = matmul_kernel(dtype)(np.asfortranarray(a), b)
        out[f"{dtype}-{m}x{k}x{n}-bt"] = matmul_kernel(dtype)(a, np.asfortranarray(b))
np.savez(sys.argv[1], **out)
print(json.dumps({"library": kernel_library.jit_used_library(),
                  "threads": parallel.thread_count(),
                  "mcjit_pool": parallel._runtime().compiled is not None,
                  "kernel_compiled": matmul_kernel("float32").compiled is not None}))
'''


def run(tmp_path, code: str, *args: str, **env) -> dict:
    """Run `code` in a fresh process with the library on in tmp_path's cache."""
    environ = dict(os.environ, REDRAFT_CACHE_DIR=str(tmp_path / "cache"), REDRAFT_CACHE="0",
                   REDRAFT_KERNEL_LIBRARY="1")
    environ.update(env)
    script = tmp_path / "work.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True,
                          text=True, env=environ, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


BUILD = r'''
import json
from redraft.compiler.cache import kernel_library
print(json.dumps({"built": kernel_library.build_and_save(), "key": kernel_library.key()}))
'''


def entry(tmp_path, key: str):
    return tmp_path / "cache" / "compiled" / key[:2] / key


def results(path) -> dict:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def assert_identical(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The work's results with the pool and kernels compiled by MCJIT (library off)."""
    tmp = tmp_path_factory.mktemp("mcjit")
    info = run(tmp, WORK, str(tmp / "out.npz"), REDRAFT_KERNEL_LIBRARY="0")
    assert info == {"library": False, "threads": info["threads"], "mcjit_pool": True,
                    "kernel_compiled": True}
    assert not (tmp / "cache" / "compiled").exists()  # switched off: nothing built
    return results(tmp / "out.npz")


def test_a_process_builds_it_in_the_background_and_the_next_loads_it(tmp_path, compiled):
    wait = WORK + "\nkernel_library.wait_for_builder()\n"
    first = run(tmp_path, wait, str(tmp_path / "first.npz"))
    assert first["library"] is False and first["mcjit_pool"]  # absent: compiled meanwhile
    assert_identical(results(tmp_path / "first.npz"), compiled)
    second = run(tmp_path, WORK, str(tmp_path / "second.npz"))
    assert second["library"] is True
    assert not second["mcjit_pool"] and not second["kernel_compiled"]  # one pool, loaded
    assert_identical(results(tmp_path / "second.npz"), compiled)
    assert not list((tmp_path / "cache" / "compiled").glob(".*.building"))


def test_the_switch_off_keeps_the_jit_on_mcjit(tmp_path, compiled):
    assert run(tmp_path, BUILD)["built"]
    info = run(tmp_path, WORK, str(tmp_path / "out.npz"), REDRAFT_KERNEL_LIBRARY="0")
    assert info["library"] is False and info["mcjit_pool"] and info["kernel_compiled"]
    assert_identical(results(tmp_path / "out.npz"), compiled)


LOADS = ("import json\nfrom redraft.compiler.cache import kernel_library\n"
         "print(json.dumps({'loaded': kernel_library.load() is not None}))")


@pytest.mark.parametrize("damage", ["truncated", "not a library"])
def test_a_corrupt_library_falls_back_to_mcjit_and_is_rebuilt(tmp_path, compiled, damage,
                                                              monkeypatch):
    key = run(tmp_path, BUILD)["key"]
    library = entry(tmp_path, key) / "code.so"
    if damage == "truncated":  # caught by the entry's hash
        library.write_bytes(library.read_bytes()[:1000])
    else:  # hashes right, but dlopen refuses it
        from redraft.compiler.cache import store
        monkeypatch.setenv("REDRAFT_CACHE_DIR", str(tmp_path / "cache"))
        fake = tmp_path / "fake.so"
        fake.write_bytes(b"\x7fELF this is not a shared object")
        store.remove(key)
        store.save(key, fake, {"name": "runtime"})
    info = run(tmp_path, WORK + "\nkernel_library.wait_for_builder()\n",
               str(tmp_path / "out.npz"))
    assert info["library"] is False and info["mcjit_pool"]
    assert_identical(results(tmp_path / "out.npz"), compiled)
    assert run(tmp_path, LOADS)["loaded"]  # removed, and built again in the background


def test_one_thread_and_a_forked_child_run_on_the_library(tmp_path, compiled):
    assert run(tmp_path, BUILD)["built"]
    one = run(tmp_path, WORK, str(tmp_path / "one.npz"), REDRAFT_NUM_THREADS="1")
    assert one["library"] is True and one["threads"] == 1
    assert_identical(results(tmp_path / "one.npz"), compiled)
    fork = WORK + r'''
pid = os.fork()
if pid == 0:  # the child: no pool workers, every loop serial, the same bits
    again = update(params, x, y)
    same = all(np.array_equal(np.asarray(l), out[f"mlp{i}"]) for i, l in
               enumerate(l for pair in again for l in pair))
    big = np.ones((300, 300), np.float32)
    prod = redraft.jit(lambda a: a @ a)(big)
    ok = same and parallel.thread_count() == 1 and float(prod[0, 0]) == 300.0
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0
'''
    info = run(tmp_path, fork, str(tmp_path / "fork.npz"), REDRAFT_NUM_THREADS="2")
    assert info["library"] is True and info["threads"] == 2
    assert_identical(results(tmp_path / "fork.npz"), compiled)


def test_two_builders_at_once_leave_one_sound_library(tmp_path):
    environ = dict(os.environ, REDRAFT_CACHE_DIR=str(tmp_path / "cache"))
    script = tmp_path / "build.py"
    script.write_text(BUILD)
    builders = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=environ, cwd=tmp_path)
                for _ in range(2)]
    outs = [p.communicate() for p in builders]
    assert all(p.returncode == 0 for p in builders), [err for _, err in outs]
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert all(r["built"] for r in reports)
    assert run(tmp_path, LOADS)["loaded"]
    assert len([p for p in (tmp_path / "cache" / "compiled").glob("*/*")
                if not p.name.startswith(".")]) == 1


CACHED = r'''
import json, sys
import numpy as np
import redraft, redraft.numpy as jnp
from redraft.compiler.backend.llvm import parallel
from redraft.compiler.cache import kernel_library
from redraft.compiler.cache.jit_cache import CachedIR

SCALE = float(sys.argv[1])


def product(a):
    return jnp.tanh(a @ a)


def scaled(a):
    return a @ a * SCALE


a = np.linspace(-1, 1, 200 * 200, dtype=np.float32).reshape(200, 200)
f, g = redraft.jit(product), redraft.jit(scaled)
out = np.asarray(f(a)), np.asarray(g(a))
print(json.dumps({"cached": isinstance(next(iter(f._cache.values())).ir, CachedIR),
                  "library": kernel_library.jit_used_library(),
                  "mcjit_pool": parallel._runtime().compiled is not None,
                  "same": bool(np.allclose(out[0], np.tanh(a @ a), rtol=1e-4, atol=1e-4)),
                  "close": bool(np.allclose(out[1], a @ a * SCALE, rtol=1e-4, atol=1e-3))}))
'''


def test_the_cache_entries_and_the_jit_share_one_library_and_pool(tmp_path):
    first = run(tmp_path, CACHED, "2.0", REDRAFT_CACHE="1")
    assert first == {"cached": False, "library": False, "mcjit_pool": True, "same": True,
                     "close": True}
    # a new scale is a new key: `scaled` compiles, on the library the cached `product` uses
    second = run(tmp_path, CACHED, "3.0", REDRAFT_CACHE="1")
    assert second == {"cached": True, "library": True, "mcjit_pool": False, "same": True,
                      "close": True}
