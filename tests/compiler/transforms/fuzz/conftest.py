"""The fuzzer's modules (programs, properties, np64) are importable from its tests."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
