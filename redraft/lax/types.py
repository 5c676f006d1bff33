"""lax's configuration types: Precision, RoundingMethod and the dimension-number aliases.

redraft computes every product in the operands' own precision on the CPU, so a Precision is
accepted (and checked) wherever JAX takes one and changes nothing; RoundingMethod names the
two `lax.round` modes.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence, Union

from redraft.compiler.primitives.conv import ConvDimensionNumbers


class Precision(enum.Enum):
    """How precisely a product on an accelerator is computed (XLA's names)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        """Precision('highest') and the other spellings JAX accepts."""
        aliases = {"bfloat16": "DEFAULT", "fastest": "DEFAULT", "tensorfloat32": "HIGH",
                   "float32": "HIGHEST"}
        if isinstance(value, str):
            name = aliases.get(value.lower(), value.upper())
            if name in cls.__members__:
                return cls[name]
        return None

    def __str__(self) -> str:
        return self.name


class RoundingMethod(enum.IntEnum):
    """`lax.round`'s modes: halves away from zero (0) or to the nearest even (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision]]
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[None, ConvDimensionNumbers, tuple[str, str, str]]
Shape = Sequence[int]
DType = Any
