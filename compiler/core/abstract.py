"""Abstract values: what staging and type-directed transforms know about an array.

`ShapedArray` is (shape, dtype, weak_type). `abstract_eval_rules[prim](*avals, **params)`
returns the ShapedArray of the result (a tuple of them for multiple-result primitives).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class ShapedArray:
    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def str_short(self) -> str:
        """`f32[3,4]` as printers show it."""
        return f"{short_dtype_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        return self.str_short()


_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "bool", "complex64": "c64", "complex128": "c128"}


def short_dtype_name(dtype) -> str:
    return _SHORT.get(np.dtype(dtype).name, np.dtype(dtype).name)


abstract_eval_rules: dict[object, Callable] = {}
