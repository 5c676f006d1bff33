"""Regenerate expected.json: what each program in cases/ gives under JAX 0.10.2 (its
values, shapes and dtypes). The programs import redraft as JAX users import JAX; this
script runs a copy of each with the imports switched to jax. Run with JAX installed (not a
test dependency; the JSON is the data):

    python tests/programs/make_expected.py [name ...]
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).parent
DATA = HERE / "expected.json"


def as_jax(text: str) -> str:
    """The program's source with redraft's imports replaced by JAX's."""
    text = text.replace("import redraft.numpy as jnp", "import jax.numpy as jnp")
    text = re.sub(r"^import redraft as jax$", "import jax", text, flags=re.M)
    return re.sub(r"^from redraft(\.\w+)* import", lambda m: m.group(0).replace(
        "redraft", "jax"), text, flags=re.M)


def run_with_jax(path: pathlib.Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / f"jax_{path.name}"
        copy.write_text(as_jax(path.read_text()))
        spec = importlib.util.spec_from_file_location(copy.stem, copy)
        module = importlib.util.module_from_spec(spec)
        sys.modules[copy.stem] = module
        spec.loader.exec_module(module)
        results = module.run()
    return {name: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype),
                   "values": np.asarray(v).ravel().tolist()} for name, v in results.items()}


def main(names: list[str]) -> None:
    import jax
    jax.config.update("jax_platforms", "cpu")
    data = json.loads(DATA.read_text()) if DATA.exists() else {}
    for path in sorted((HERE / "cases").glob("*.py")):
        if names and path.stem not in names:
            continue
        data[path.stem] = run_with_jax(path)
        print(path.stem, ", ".join(data[path.stem]))
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
