"""Derivative rules, one file per family of operations. Importing registers them all."""
from redraft.compiler.transforms.rules import (elementwise, helpers, reductions,  # noqa: F401
                                               shapes, structure)
