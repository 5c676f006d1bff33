"""Setup for the redraft.numpy tests: checks.py, beside this file, is importable."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
