"""Small but whole programs in the style of JAX's tutorials, written with `import redraft
as jax` (tests/programs/cases/), each run under redraft and compared with what JAX 0.10.2
gives for the same source (expected.json, made by make_expected.py): every result's values
(to 1e-5), shape and dtype."""
import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
EXPECTED = json.loads((HERE / "expected.json").read_text())


def _load(name: str):
    path = HERE / "cases" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"jax_style_program_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_program_gives_what_jax_gives(name):
    got = _load(name).run()
    want = EXPECTED[name]
    assert sorted(got) == sorted(want)
    for key, spec in want.items():
        value = np.asarray(got[key])
        assert list(value.shape) == spec["shape"], key
        assert str(value.dtype) == spec["dtype"], key
        np.testing.assert_allclose(value.ravel(), np.asarray(spec["values"], value.dtype),
                                   rtol=1e-5, atol=1e-5, err_msg=f"{name}: {key}")
