"""Makes nvvm_util.py (and the parent folder's helpers) importable by these tests."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
for path in (HERE, HERE.parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
