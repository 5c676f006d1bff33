"""`redraft build`: a module's exports -> one shared library, a NumPy-only Python package
and a C header, checked against redraft's eager results in a process that has NumPy and
nothing else, and from a C program."""
import json
import pathlib
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from redraft.compiler.aot.build import build
from redraft.compiler.aot.entry import BuildError
from redraft.compiler.aot.link import c_compiler

import redraft
import redraft.numpy as jnp

MODULE = '''
import redraft
import redraft.numpy as jnp
from aothelpers import squash


@redraft.export("f32[5]", "f32[2,3]")
def swish(x):
    return x / (1.0 + jnp.exp(-x))


@redraft.export("{'w': f32[3], 'b': f32[]}, f32[4,3]")
def affine(params, x):
    return {"y": x @ params["w"] + params["b"], "norm": jnp.sum(params["w"] ** 2)}


def loss(w, x, y):
    return jnp.mean((squash(x @ w) - y) ** 2)


loss_grad = redraft.export("f32[3],f32[8,3],f32[8]", name="loss_grad")(redraft.grad(loss))


def scale_add(a, b):
    return 2.0 * a + jnp.sin(b)


batched = redraft.export("f32[4,3],f32[3]", name="batched")(
    redraft.vmap(scale_add, in_axes=(0, None)))
'''

HELPERS = '''
import redraft.numpy as jnp


def squash(z):
    return jnp.tanh(z)
'''


def _inputs():
    rng = np.random.default_rng(0)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    return {
        "swish": [(f(5),), (f(2, 3),)],
        "affine": [({"w": f(3), "b": f()}, f(4, 3))],
        "loss_grad": [(f(3), f(8, 3), f(8))],
        "batched": [(f(4, 3), f(3))],
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    (src / "aotmod.py").write_text(MODULE)
    (src / "aothelpers.py").write_text(HELPERS)
    out = tmp_path_factory.mktemp("build")
    logs = []
    result = build(src / "aotmod.py", out, log=logs.append)
    return src, out, result, logs


def _eager(name, args):
    module = sys.modules["aotmod"]
    fn = getattr(module, name)
    as_arrays = redraft.tree_util.tree_map(jnp.asarray, args)
    return redraft.tree_util.tree_map(np.asarray, fn(*as_arrays))


def test_build_writes_library_header_and_package(built):
    _, out, result, logs = built
    assert result.library.is_file() and result.header.is_file()
    assert (out / "aotmod" / "__init__.py").is_file()
    assert len(result.compiled) == 5 and result.linked
    assert any("staging" in line and "codegen" in line for line in logs)
    header = result.header.read_text()
    assert 'extern "C"' in header
    assert "int aotmod_swish_0(const float *arg0, float *out);" in header
    assert "int aotmod_swish_1(" in header
    assert "swish(f32[2,3])" in header and "aotmod.py:7" in header


def test_package_in_a_numpy_only_python_matches_eager(built, tmp_path):
    _, out, _, _ = built
    inputs = _inputs()
    np.save(tmp_path / "inputs.npy", np.array(inputs, dtype=object), allow_pickle=True)
    numpy_dir = _numpy_only(tmp_path / "numpy-only")
    script = textwrap.dedent(f"""
        import sys
        sys.path[:] = [p for p in sys.path if 'site-packages' not in p]
        sys.path += [{numpy_dir!r}, {str(out)!r}]
        assert not sys.meta_path[3:], sys.meta_path  # no editable-install finders
        import numpy as np
        for name in ("redraft", "llvmlite", "gast"):
            try:
                __import__(name)
                raise SystemExit(name + " is importable here")
            except ImportError:
                pass
        import aotmod
        inputs = np.load({str(tmp_path / 'inputs.npy')!r}, allow_pickle=True).item()
        results = {{name: [getattr(aotmod, name)(*args) for args in calls]
                    for name, calls in inputs.items()}}
        np.save({str(tmp_path / 'outputs.npy')!r}, np.array(results, dtype=object),
                allow_pickle=True)
        assert "redraft" not in sys.modules and "llvmlite" not in sys.modules
    """)
    # -I -S: no site-packages, no .pth files; NumPy is the one package on the path
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True,
                          text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    results = np.load(tmp_path / "outputs.npy", allow_pickle=True).item()
    for name, calls in inputs.items():
        for args, got in zip(calls, results[name]):
            want = _eager(name, args)
            got_leaves = redraft.tree_util.tree_leaves(got)
            want_leaves = redraft.tree_util.tree_leaves(want)
            assert redraft.tree_util.tree_structure(got) == \
                redraft.tree_util.tree_structure(want)
            for g, w in zip(got_leaves, want_leaves):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def _numpy_only(where: pathlib.Path) -> str:
    """A directory holding NumPy (and its bundled libraries) and nothing else."""
    where.mkdir()
    site = pathlib.Path(np.__file__).parent.parent
    for name in ("numpy", "numpy.libs"):
        if (site / name).exists():
            (where / name).symlink_to(site / name)
    return str(where)


def test_package_names_the_signatures_on_a_mismatch(built):
    _, out, _, _ = built
    package = _import_built(out)
    with pytest.raises(TypeError, match=r"no compiled signature takes \(f32\[7\]\).*f32\[5\]"):
        package.swish(np.zeros(7, np.float32))
    # a float64 array of a built shape is cast, as the jitted function would
    got = package.swish(np.linspace(-1, 1, 5))
    assert got.dtype == np.float32


def _import_built(out):
    return _import_package(out / "aotmod", "aotmod_pkg")


def _import_package(folder: pathlib.Path, name: str):
    """Import a built package under another name (its own is the source module's)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _eager_of(fn, *args):
    return np.asarray(fn(*[jnp.asarray(a) for a in args]))


C_PROGRAM = r'''
#include <stdio.h>
#include "aotmod.h"

int main(void) {
    const float x[5] = {@X@};
    float y[5];
    const float w[3] = {@W@}, xs[24] = {@XS@}, ys[8] = {@YS@};
    float g[3];
    if (aotmod_swish_0(x, y) != 0 || aotmod_loss_grad(w, xs, ys, g) != 0) return 1;
    for (int i = 0; i < 5; i++) printf("%.9g\n", y[i]);
    for (int i = 0; i < 3; i++) printf("%.9g\n", g[i]);
    return 0;
}
'''


def _c_list(a):
    return ", ".join(f"{v:.9g}f" for v in np.ravel(a))


def test_c_program_against_the_header_matches_eager(built, tmp_path):
    cc = c_compiler()
    if cc is None:
        pytest.skip("no C compiler installed (cc, gcc or clang)")
    _, out, _, _ = built
    inputs = _inputs()
    (x,), = inputs["swish"][:1]
    w, xs, ys = inputs["loss_grad"][0]
    source = C_PROGRAM.replace("@X@", _c_list(x)).replace("@W@", _c_list(w)) \
        .replace("@XS@", _c_list(xs)).replace("@YS@", _c_list(ys))
    (tmp_path / "main.c").write_text(source)
    exe = tmp_path / "main"
    subprocess.run([cc, "-o", str(exe), str(tmp_path / "main.c"), f"-I{out}", f"-L{out}",
                    "-laotmod", f"-Wl,-rpath,{out}"], check=True)
    done = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    values = np.array([float(v) for v in done.stdout.split()], np.float32)
    np.testing.assert_allclose(values[:5], _eager("swish", (x,)), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(values[5:], _eager("loss_grad", (w, xs, ys)), rtol=2e-6,
                               atol=1e-6)


def test_rebuild_compiles_only_what_changed(built, tmp_path):
    src, out, _, _ = built
    again = build(src / "aotmod.py", out, log=lambda _: None)
    assert again.compiled == [] and not again.linked
    # a change in the helper file reaches loss_grad only
    (src / "aothelpers.py").write_text(HELPERS.replace("jnp.tanh(z)", "jnp.tanh(z) * 2.0"))
    sys.modules.pop("aothelpers", None)
    try:
        changed = build(src / "aotmod.py", out, log=lambda _: None)
    finally:
        (src / "aothelpers.py").write_text(HELPERS)
        sys.modules.pop("aothelpers", None)
    assert changed.compiled == ["loss_grad(f32[3],f32[8,3],f32[8])"] and changed.linked


def _build_error(tmp_path, body):
    (tmp_path / "badmod.py").write_text("import redraft\nimport redraft.numpy as jnp\n"
                                        + textwrap.dedent(body))
    with pytest.raises(BuildError) as info:
        build(tmp_path / "badmod.py", tmp_path / "out", log=lambda _: None)
    return str(info.value)


def test_an_export_that_prints_fails_naming_the_line(tmp_path):
    message = _build_error(tmp_path, '''
        @redraft.export("f32[3]")
        def noisy(x):
            y = x * 2.0
            print("y =", y)
            return y
    ''')
    assert "badmod.py:7" in message and "noisy" in message and "Python" in message


def test_a_64_bit_signature_fails_clearly(tmp_path):
    message = _build_error(tmp_path, '''
        @redraft.export("f64[3]")
        def double(x):
            return x * 2.0
    ''')
    assert "badmod.py:4" in message and "f64[3]" in message and "32-bit" in message


def test_an_export_the_backend_cannot_lower_fails_naming_the_function(tmp_path):
    message = _build_error(tmp_path, '''
        @redraft.export("f32[5]")
        def halved(x):
            return (x.astype(jnp.float16) * 2.0).astype(jnp.float32)
    ''')
    assert "halved(f32[5])" in message and "badmod.py:4" in message
    assert "cannot lower" in message


def test_an_export_that_sorts_fails_naming_the_host_kernel(tmp_path):
    message = _build_error(tmp_path, '''
        @redraft.export("f32[5]")
        def ordered(x):
            return jnp.sort(x)
    ''')
    assert "ordered(f32[5])" in message and "calls its host kernel" in message


def test_build_command_line(tmp_path, capsys):
    from redraft.cli import main
    (tmp_path / "tiny.py").write_text("import redraft\n\n@redraft.export('f32[4]')\n"
                                      "def twice(x):\n    return 2.0 * x\n")
    assert main(["build", str(tmp_path / "tiny.py"), "--out", str(tmp_path / "out"),
                 "--emit-source"]) == 0
    text = capsys.readouterr().out
    assert "twice(f32[4]): staging" in text and "1 compiled" in text
    assert (tmp_path / "out" / "tiny_source.py").read_text().count("def twice") == 1
    assert json.loads((tmp_path / "out" / "tiny" / "_entries.json").read_text())["twice"]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="names an x86-64 CPU")
def test_target_names_another_cpu(tmp_path):
    """Code for the baseline x86-64 CPU (SSE2 only) still gives the same numbers."""
    (tmp_path / "generic.py").write_text(
        "import redraft\nimport redraft.numpy as jnp\n\n@redraft.export('f32[1000]')\n"
        "def soft(x):\n    return jnp.log1p(jnp.exp(x)) * jnp.tanh(x)\n")
    result = build(tmp_path / "generic.py", tmp_path / "out", target="x86-64",
                   log=lambda _: None)
    package = _import_package(result.package, "generic_x86_64")
    x = np.linspace(-4, 4, 1000, dtype=np.float32)
    np.testing.assert_allclose(package.soft(x), _eager_of(sys.modules["generic"].soft, x),
                               rtol=2e-6, atol=1e-6)
