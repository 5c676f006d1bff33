"""Smoke test: examples/derivatives_plot.py runs in seconds and its derivatives match the
closed forms."""
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "derivatives_plot.py"


def test_derivatives_example_prints_matching_values():
    out = subprocess.run([sys.executable, str(EXAMPLE), "--text"], capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    assert out[0].split() == ["x", "tanh", "tanh'", "tanh''", "tanh'''"]
    assert len(out) == 10
    assert float(out[-1].split()[-1]) < 1e-5
