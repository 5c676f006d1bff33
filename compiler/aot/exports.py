"""Declaring exports: `redraft.export(*signatures, name=None)` records a function (plain or
transformed) with the argument types it is built for, and where the declaration is.

A signature is the string `redraft ir --sig` reads ("f32[100],f32[]"), or pytrees of those
types written as Python literals ("{'a': f32[3], 'b': f32[3]}, f32[]").
"""
from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

DTYPES = {"bool": "bool", "f16": "float16", "f32": "float32", "f64": "float64",
          "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
          "u16": "uint16", "u32": "uint32", "u64": "uint64"}
_TYPE = re.compile(r"\b(" + "|".join(DTYPES) + r")\[([\d,\s]*)\]")
_MARK = "\x00redraft-type:"


@dataclass
class Export:
    """One function a build compiles, for each of its signatures."""
    fun: Callable
    signatures: tuple[str, ...]
    name: str
    module: str          # the declaring module's __name__
    origin: tuple[str, int]   # file and line of the export(...) call

    def where(self) -> str:
        return f"{self.origin[0]}:{self.origin[1]}"


# module __name__ -> its exports, in declaration order
REGISTRY: dict[str, list[Export]] = {}


def export(*signatures: str, name: str | None = None) -> Callable[[Callable], Callable]:
    """Mark a function for `redraft build`; the function itself is returned unchanged."""
    if not signatures:
        raise TypeError("redraft.export needs at least one signature, e.g. 'f32[3],f32[]'")
    for text in signatures:
        parse_signature(text)  # a typo fails here, at the user's line
    frame = sys._getframe(1)
    module = frame.f_globals.get("__name__", "__main__")
    origin = (frame.f_code.co_filename, frame.f_lineno)

    def mark(fun: Callable) -> Callable:
        label = name or getattr(fun, "__name__", None)
        if not label or not label.isidentifier():
            raise ValueError(f"{origin[0]}:{origin[1]}: give this export a name= that is a "
                             f"valid identifier (got {label!r})")
        REGISTRY.setdefault(module, []).append(
            Export(fun, tuple(signatures), label, module, origin))
        return fun

    return mark


def parse_signature(text: str) -> tuple:
    """The arguments a signature describes, as a tuple of pytrees of zero NumPy arrays."""
    marked = _TYPE.sub(lambda m: repr(f"{_MARK}{m.group(1)}[{m.group(2)}]"), text)
    try:
        value = ast.literal_eval("(" + marked + ",)") if text.strip() else ()
    except (SyntaxError, ValueError):
        raise ValueError(f"cannot read the signature {text!r}: expected types like "
                         "f32[100],i32[] or pytrees of them such as "
                         "\"{'a': f32[3], 'b': f32[3]}\"") from None
    return tuple(_arrays(v, text) for v in value)


def _arrays(value: Any, text: str) -> Any:
    if isinstance(value, str) and value.startswith(_MARK):
        match = _TYPE.fullmatch(value[len(_MARK):])
        if match is None:  # 'f32[3] f32[2]': two literals Python joined into one
            raise ValueError(f"cannot read the signature {text!r}: separate types with ','")
        shape = tuple(int(d) for d in match.group(2).split(",") if d.strip())
        return np.zeros(shape, DTYPES[match.group(1)])
    if isinstance(value, tuple):
        return tuple(_arrays(v, text) for v in value)
    if isinstance(value, list):
        return [_arrays(v, text) for v in value]
    if isinstance(value, dict):
        return {k: _arrays(v, text) for k, v in value.items()}
    raise ValueError(f"in the signature {text!r}: {value!r} is not a type such as f32[3]")


def short_type(a: np.ndarray) -> str:
    """f32[3,4] for a float32 array of shape (3, 4)."""
    kind = next(k for k, v in DTYPES.items() if v == a.dtype.name)
    return f"{kind}[{','.join(str(d) for d in a.shape)}]"
