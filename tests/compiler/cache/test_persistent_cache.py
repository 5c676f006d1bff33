"""The persistent compile cache across processes: a second process loads what the first
compiled, and every change that alters the result (a callee in another file, a global, a
static argument) or a corrupted entry makes it compile again."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from redraft.compiler.aot.link import c_compiler

pytestmark = pytest.mark.skipif(c_compiler() is None,
                                reason="the cache links entries with the system C compiler")

USERMOD = '''
import redraft.numpy as jnp
from cachehelper import inner

SCALE = 3.0


def model(x):
    return inner(x) * SCALE


def powered(x, n):
    return x ** n + jnp.cos(x)


def big_product(x):
    m = jnp.outer(jnp.tile(x, 40), jnp.tile(x, 40))
    return jnp.sum(jnp.tanh(m @ m), axis=0)[:7]
'''

HELPER = '''
import redraft.numpy as jnp


def inner(x):
    return jnp.sin(x) + 1.0
'''

RUN = '''
import json, sys
import numpy as np
import redraft
from redraft.compiler.cache.jit_cache import CachedIR
import cachemod
name, static = sys.argv[1], json.loads(sys.argv[2])
x = np.linspace(-1.0, 1.0, 7).astype(np.float32)
if static is None:
    f = redraft.jit(getattr(cachemod, name))
    out = f(x)
else:
    f = redraft.jit(getattr(cachemod, name), static_argnums=1)
    out = f(x, static)
compiled = next(iter(f._cache.values()))
print(json.dumps({"cached": isinstance(compiled.ir, CachedIR),
                  "out": np.asarray(out).tolist()}))
'''


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "cachemod.py").write_text(USERMOD)
    (src / "cachehelper.py").write_text(HELPER)
    (src / "run.py").write_text(RUN)
    return src, tmp_path / "cache"


def run(project, name="model", static=None) -> dict:
    src, cache = project
    env = dict(os.environ, REDRAFT_CACHE="1", REDRAFT_CACHE_DIR=str(cache),
               PYTHONPATH=str(src))
    done = subprocess.run([sys.executable, str(src / "run.py"), name, json.dumps(static)],
                          capture_output=True, text=True, env=env, cwd=src, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


X = np.linspace(-1.0, 1.0, 7).astype(np.float32)


def test_a_second_process_loads_the_compiled_code(project):
    first, second = run(project), run(project)
    assert not first["cached"] and second["cached"]
    np.testing.assert_allclose(second["out"], first["out"], rtol=0, atol=0)
    np.testing.assert_allclose(first["out"], (np.sin(X) + 1.0) * 3.0, rtol=1e-6)


def test_entries_share_one_runtime_library_for_the_pool_and_kernels(project):
    _, cache = project
    first, second = run(project, "big_product"), run(project, "big_product")
    assert not first["cached"] and second["cached"]
    np.testing.assert_array_equal(second["out"], first["out"])
    t = np.tile(X, 40)
    m = np.outer(t, t)
    np.testing.assert_allclose(first["out"], np.tanh(m @ m).sum(0)[:7], rtol=1e-4)
    metas = [json.loads(p.read_text().partition("\n")[2])
             for p in cache.glob("compiled/*/*/meta.json")]
    assert sorted(m["name"] for m in metas) == ["redraft_main", "runtime"]
    assert next(m for m in metas if m["name"] == "redraft_main")["needs_runtime"]


def test_a_changed_callee_in_another_file_recompiles(project):
    src, _ = project
    run(project)
    (src / "cachehelper.py").write_text(HELPER.replace("+ 1.0", "+ 2.0"))
    changed = run(project)
    assert not changed["cached"]
    np.testing.assert_allclose(changed["out"], (np.sin(X) + 2.0) * 3.0, rtol=1e-6)


def test_a_changed_global_recompiles(project):
    src, _ = project
    run(project)
    (src / "cachemod.py").write_text(USERMOD.replace("SCALE = 3.0", "SCALE = 5.0"))
    changed = run(project)
    assert not changed["cached"]
    np.testing.assert_allclose(changed["out"], (np.sin(X) + 1.0) * 5.0, rtol=1e-6)


def test_a_changed_static_argument_is_another_entry(project):
    assert not run(project, "powered", 2)["cached"]
    assert run(project, "powered", 2)["cached"]
    three = run(project, "powered", 3)
    assert not three["cached"]
    np.testing.assert_allclose(three["out"], X ** 3 + np.cos(X), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("victim", ["code.so", "meta.json"])
def test_a_corrupted_entry_is_never_loaded_and_is_rewritten(project, victim):
    _, cache = project
    good = run(project)
    files = list(cache.glob(f"compiled/*/*/{victim}"))
    assert len(files) == 1
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[0].write_bytes(bytes(data))
    again = run(project)
    assert not again["cached"]
    np.testing.assert_allclose(again["out"], good["out"], rtol=0, atol=0)
    assert run(project)["cached"]


def test_concurrent_writers_leave_one_sound_entry(project):
    src, cache = project
    env = dict(os.environ, REDRAFT_CACHE="1", REDRAFT_CACHE_DIR=str(cache),
               PYTHONPATH=str(src))
    procs = [subprocess.Popen([sys.executable, str(src / "run.py"), "model", "null"],
                              env=env, cwd=src, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [json.loads(p.communicate()[0].splitlines()[-1]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert all(o["out"] == outs[0]["out"] for o in outs)
    assert len(list(cache.glob("compiled/*/*/meta.json"))) == 1
    assert not list(cache.glob("compiled/*/.*"))  # no staging folder left behind
    assert run(project)["cached"]


def test_cache_off_with_redraft_cache_0(project):
    src, cache = project
    env = dict(os.environ, REDRAFT_CACHE="0", REDRAFT_CACHE_DIR=str(cache),
               PYTHONPATH=str(src))
    for _ in range(2):
        done = subprocess.run([sys.executable, str(src / "run.py"), "model", "null"],
                              capture_output=True, text=True, env=env, cwd=src, check=True)
        assert json.loads(done.stdout.splitlines()[-1])["cached"] is False
    assert not (cache / "compiled").exists()


def test_cache_command_line(project, capsys, monkeypatch):
    from redraft.cli import main
    _, cache = project
    run(project)
    monkeypatch.setenv("REDRAFT_CACHE_DIR", str(cache))
    assert main(["cache", "info"]) == 0
    entries = len(list(cache.glob("compiled/*/*")))
    assert f"{entries} entries" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert f"removed {entries} entries" in capsys.readouterr().out
    assert not list(cache.glob("compiled/*/*"))


def test_within_one_process_results_match_the_uncached_compile(monkeypatch, tmp_path):
    """Save and load in-process: the loaded runner returns what the compiled one did."""
    from redraft.compiler.cache import jit_cache

    import redraft
    import redraft.numpy as jnp
    monkeypatch.setenv("REDRAFT_CACHE", "1")
    monkeypatch.setenv("REDRAFT_CACHE_DIR", str(tmp_path))

    def step(params, x):
        w, b = params["w"], params["b"]
        h = jnp.tanh(x @ w + b)
        return {"h": h, "total": jnp.sum(h), "w": w}

    params = {"w": jnp.ones((4, 3)) * 0.1, "b": jnp.arange(3.0)}
    x = jnp.arange(8.0).reshape(2, 4)
    fresh = redraft.jit(step)(params, x)
    jit_cache.flush()
    loaded_fn = redraft.jit(step)
    loaded = loaded_fn(params, x)
    assert isinstance(next(iter(loaded_fn._cache.values())).ir, jit_cache.CachedIR)
    for key in ("h", "total", "w"):
        np.testing.assert_array_equal(np.asarray(loaded[key]), np.asarray(fresh[key]))
        assert loaded[key].dtype == fresh[key].dtype


def test_uncacheable_dependencies_are_not_saved():
    from redraft.compiler.cache.fingerprint import fingerprint

    class Config:
        scale = 2.0

    config = Config()

    def uses_object(x):
        return x * config.scale

    assert fingerprint(uses_object) is None


def test_fingerprint_follows_closures_and_array_contents():
    from redraft.compiler.cache.fingerprint import fingerprint

    def make(table):
        def f(x):
            return x + table
        return f

    a, b = np.zeros(3, np.float32), np.zeros(3, np.float32)
    assert fingerprint(make(a)) == fingerprint(make(b))
    b[1] = 1.0
    assert fingerprint(make(a)) != fingerprint(make(b))


def test_store_is_atomic_and_checks_hashes(tmp_path, monkeypatch):
    from redraft.compiler.cache import store
    monkeypatch.setenv("REDRAFT_CACHE_DIR", str(tmp_path))
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"not really a library")
    store.save("ab" * 32, lib, {"name": "f"})
    found = store.load("ab" * 32)
    assert found is not None and found[1]["name"] == "f"
    assert not list(tmp_path.glob("compiled/ab/.*"))  # no staging directory left behind
    # an entry copied under another key is refused
    other = store.entry_dir("cd" * 32)
    other.parent.mkdir(parents=True)
    shutil.copytree(store.entry_dir("ab" * 32), other)
    assert store.load("cd" * 32) is None and not other.exists()


def test_lambdas_on_one_line_have_their_own_fingerprints():
    """getsource gives every lambda of a line the same text; the key also holds the code
    (a second process got the first lambda's compiled code for the second: a wrong result).
    Lambdas of one line with the same code may share a key: their compiled code is the same."""
    import redraft
    from redraft.compiler.cache.fingerprint import fingerprint
    fs = [lambda x: x * 2.0, lambda x: x * 3.0, lambda x: x + 2.0, lambda x: np.sin(x),
          lambda x: np.cos(x)]  # the last two differ only in an attribute's name
    keys = [fingerprint(f) for f in fs]
    assert len(set(keys)) == 5
    assert fingerprint(redraft.grad(fs[3])) != fingerprint(redraft.grad(fs[4]))
    assert fingerprint(fs[1]) == keys[1]
