"""The primitive families. Importing this package registers every primitive and its rules."""
from redraft.compiler.primitives import (elementwise, indexing, linalg,  # noqa: F401
                                         reductions, shape)
from redraft.compiler.primitives.base import ALL_PRIMITIVES, Primitive  # noqa: F401
from redraft.compiler.primitives import conv, gather  # noqa: E402,F401
