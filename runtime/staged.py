"""A buffer whose value is known only when compiled code runs (during jit's staging).

An Array over a StagedBuf has a shape and dtype but no numbers: `bind` hands any operation
on it to the builder that made it, which records an IR equation and returns new staged
Arrays. Anything that needs the numbers now (bool(), float(), np.asarray()) raises JAX's
error classes, naming what to do instead.
"""
from __future__ import annotations

from redraft.runtime.errors import ConcretizationTypeError, TracerBoolConversionError


class StagedBuf:
    __slots__ = ("aval", "value", "builder")

    def __init__(self, aval, value, builder):
        self.aval = aval
        self.value = value
        self.builder = builder

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def itemsize(self) -> int:
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    @property
    def flags(self):
        raise ConcretizationTypeError(self._needs("a NumPy buffer"))

    def _needs(self, what: str) -> str:
        return (f"a value of type {self.aval.str_short()} is only known when the compiled "
                f"function runs, but {what} was needed while compiling it. Mark the argument "
                "static (static_argnums) or keep the computation in redraft.numpy")

    def __array__(self, dtype=None, copy=None):
        raise ConcretizationTypeError(self._needs("its concrete value (np.asarray)"))

    def __bool__(self):
        raise TracerBoolConversionError(self._needs("a Python bool"))

    def __index__(self):
        raise ConcretizationTypeError(self._needs("a Python int"))

    def item(self, *args):
        raise ConcretizationTypeError(self._needs("a Python scalar (.item())"))

    def tolist(self):
        raise ConcretizationTypeError(self._needs("a Python list (.tolist())"))

    def astype(self, *args, **kwargs):
        raise ConcretizationTypeError(self._needs("a NumPy cast"))

    def reshape(self, *args, **kwargs):
        raise ConcretizationTypeError(self._needs("a NumPy reshape"))

    def __repr__(self) -> str:
        return f"Staged({self.aval.str_short()})"
