"""Smoke tests: the examples built on the library API run in seconds and do what they say."""
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "mlp_optimizers.py"


def test_mlp_example_trains():
    out = subprocess.run([sys.executable, str(EXAMPLE), "--epochs", "3"], capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    assert len(out) == 3
    losses = [float(line.split()[3]) for line in out]
    accuracy = float(out[-1].split()[5])
    assert losses[-1] < losses[0] and accuracy > 0.9


def test_per_example_gradients_example():
    script = EXAMPLE.parent / "per_example_gradients.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    assert len(out) == 9 and out[-1].endswith("(matches: True)")
