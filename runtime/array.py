"""Array: an immutable n-dimensional array over a device buffer.

On the host the buffer is a NumPy array that redraft never writes after creation and marks
read-only before handing it out (`np.asarray(x)` shares it, without a copy). On a GPU it is
a `DeviceBuffer` (runtime/device_buffer.py), read back to the host when a value is needed.
Operators, reductions and methods are attached by `redraft.numpy` (see `install_methods`), so
that this module stays free of any numerical code and every operation goes through lax.
"""
from __future__ import annotations

import numpy as np

from redraft.runtime import transfer_guard
from redraft.runtime.device_buffer import DeviceBuffer
from redraft.runtime.devices import Device, host_device


class Array:
    """An immutable array. Build one with `redraft.numpy.array` or any redraft function."""

    __slots__ = ("_buf", "_weak", "__weakref__")
    __array_priority__ = 100

    # ---- attributes ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._buf.shape

    @property
    def dtype(self) -> np.dtype:
        return self._buf.dtype

    @property
    def ndim(self) -> int:
        return self._buf.ndim

    @property
    def size(self) -> int:
        return self._buf.size

    @property
    def itemsize(self) -> int:
        return self._buf.itemsize

    @property
    def nbytes(self) -> int:
        return self._buf.nbytes

    @property
    def weak_type(self) -> bool:
        return self._weak

    @property
    def device(self) -> Device:
        buf = self._buf
        return buf.device if type(buf) is DeviceBuffer else host_device()

    def devices(self) -> set[Device]:
        return {self.device}

    def _value(self):
        """The buffer, read back to the host first when it lives on a device."""
        buf = self._buf
        return buf.to_host() if type(buf) is DeviceBuffer else buf

    @property
    def at(self) -> "_IndexUpdateHelper":
        return _IndexUpdateHelper(self)

    # ---- conversion to host values ------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        buf = self._value()
        buf.flags.writeable = False
        if copy:
            buf = buf.copy()
        if dtype is not None and np.dtype(dtype) != buf.dtype:
            if copy is False:
                raise ValueError("converting to another dtype needs a copy")
            return buf.astype(dtype)
        return buf

    def block_until_ready(self) -> "Array":
        """Wait until the value is computed (host computation is synchronous; device work
        is queued, and its errors are raised here)."""
        if type(self._buf) is DeviceBuffer:
            self._buf.wait()
        return self

    def copy_to_host_async(self) -> None:
        if type(self._buf) is DeviceBuffer:
            with transfer_guard.explicit():  # asked for: an explicit transfer
                self._buf.copy_to_host_async()

    def tolist(self):
        return self._value().tolist()

    def item(self, *args):
        return self._value().item(*args)

    def __bool__(self) -> bool:
        if self._buf.size != 1:
            raise ValueError(f"the truth value of an array of shape {self.shape} is ambiguous;"
                             " use .any() or .all()")
        return bool(self._value())

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self._buf.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._scalar("index"))

    def _scalar(self, what: str):
        buf = self._value()
        if type(buf) is not np.ndarray:  # staged: no value while compiling
            from redraft.runtime.errors import ConcretizationTypeError
            raise ConcretizationTypeError(buf._needs(f"a Python {what}"))
        if buf.size != 1:
            raise TypeError(f"only arrays of size 1 convert to Python {what}, "
                            f"not shape {self.shape}")
        return buf.reshape(()).item()

    def __len__(self) -> int:
        if self._buf.ndim == 0:
            raise TypeError("len() of an unsized (0-d) array")
        return self._buf.shape[0]

    def __iter__(self):
        if self._buf.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        weak = self._weak
        if type(self._buf) is not np.ndarray:  # staged or on a device: rows by indexing
            return (self[i] for i in range(self._buf.shape[0]))
        return (wrap_host(row, weak) for row in _rows(self._buf))

    def __hash__(self):
        raise TypeError("unhashable type: redraft Array (arrays are values, not keys; "
                        "use a tuple of Python numbers as a static argument instead)")

    def __setitem__(self, idx, value):
        raise TypeError(
            "redraft arrays are immutable: `x[idx] = y` cannot change x. "
            "Use `x = x.at[idx].set(y)` (or .add/.multiply/.min/.max) for an updated copy.")

    def __delitem__(self, idx):
        raise TypeError("redraft arrays are immutable: items cannot be deleted")

    # ---- printing -------------------------------------------------------------------------
    def __repr__(self) -> str:
        buf = self._value()
        if type(buf) is not np.ndarray:
            return f"Staged<{buf.aval.str_short()}>"
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True)" if self._weak else ")")
        line_width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(buf, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=line_width)
        last_line = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line + len(dtype_str) + 1 > line_width else " "
        return f"{prefix}{body},{sep}{dtype_str}"

    def __str__(self) -> str:
        buf = self._value()
        if type(buf) is not np.ndarray:
            return repr(self)
        return str(buf)

    def __format__(self, spec: str) -> str:
        if self._buf.ndim == 0:
            return format(self._value().item(), spec)
        return format(str(self), spec)

    # ---- pickling / copying: arrays are values --------------------------------------------
    def __reduce__(self):
        return (wrap_host, (np.array(self._value()), self._weak))

    def __copy__(self) -> "Array":
        return self

    def __deepcopy__(self, memo) -> "Array":
        return self


def wrap_device(buf: DeviceBuffer, weak: bool = False) -> Array:
    """An Array over device buffer `buf`."""
    out = Array()
    out._buf = buf
    out._weak = weak
    return out


def _rows(buf: np.ndarray):
    for i in range(buf.shape[0]):
        row = buf[i]
        yield row if type(row) is np.ndarray else np.asarray(row)


def wrap_host(buf: np.ndarray, weak: bool = False) -> Array:
    """An Array over host buffer `buf`, which the caller promises never to write again."""
    out = Array()  # Array has no __init__: calling the class is the cheapest allocation
    out._buf = buf
    out._weak = weak
    return out


class _IndexUpdateHelper:
    """`x.at[idx]`: the functional form of indexed updates."""

    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, idx) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]` bound to an index: `.set/.add/.multiply/.divide/.power/.min/.max/.apply/
    .get`."""

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index):
        self.array = array
        self.index = index

    def get(self, **kwargs) -> Array:
        # mode=, fill_value=, or a Python int out of range (clamped, as in JAX):
        # redraft/numpy/indexing.py's at_get_mode
        if kwargs or _NUMPY_API["static_out_of_bounds"](self.array.shape, self.index):
            return _NUMPY_API["at_get_mode"](self.array, self.index, **kwargs)
        return self.array[self.index]

    def _apply(self, values, op: str, kwargs: dict) -> Array:
        """The update `op`; with options (mode=...) or an out-of-range Python-int index
        (dropped, as in JAX) through redraft/numpy/indexing.py's at_update_mode; recorded
        where a traced value is among the index or the values."""
        recorder = recorder_in(self.index, values)
        if recorder is not None:
            return recorder.__redraft_update__(self.array, self.index, op, values, kwargs)
        if kwargs or _NUMPY_API["static_out_of_bounds"](self.array.shape, self.index):
            return _NUMPY_API["at_update_mode"](self.array, self.index, values, op, **kwargs)
        return None

    def set(self, values, **kwargs) -> Array:
        out = self._apply(values, "set", kwargs)
        return _update(self.array, self.index, values, "set") if out is None else out

    def add(self, values, **kwargs) -> Array:
        out = self._apply(values, "add", kwargs)
        return _update(self.array, self.index, values, "add") if out is None else out

    def subtract(self, values, **kwargs) -> Array:
        out = self._apply(values, "subtract", kwargs)
        if out is not None:
            return out
        return _update(self.array, self.index, -_np_api().asarray(values), "add")

    def multiply(self, values, **kwargs) -> Array:
        out = self._apply(values, "multiply", kwargs)
        return _update(self.array, self.index, values, "mul") if out is None else out

    mul = multiply

    def divide(self, values, **kwargs) -> Array:
        out = self._apply(values, "divide", kwargs)
        if out is not None:
            return out
        # as JAX: x / (ones with the values multiplied in), so a repeated index divides by
        # each of its values, and an integer x gives true division's float
        jnp = _np_api()
        divisor = _update(jnp.ones_like(self.array), self.index, values, "mul")
        return jnp.divide(self.array, divisor)

    def apply(self, func, **kwargs) -> Array:
        """func (a unary ufunc) applied to the indexed elements, once per element."""
        jnp = _np_api()
        chosen = jnp.zeros(self.array.shape, bool).at[self.index].set(True, **kwargs)
        return jnp.where(chosen, func(self.array), self.array)

    def power(self, values, **kwargs) -> Array:
        out = self._apply(values, "power", kwargs)
        return _update(self.array, self.index, values, "pow") if out is None else out

    def min(self, values, **kwargs) -> Array:
        out = self._apply(values, "min", kwargs)
        return _update(self.array, self.index, values, "min") if out is None else out

    def max(self, values, **kwargs) -> Array:
        out = self._apply(values, "max", kwargs)
        return _update(self.array, self.index, values, "max") if out is None else out


# `x.at[i].op(v)` is built on redraft.numpy, the layer above the runtime. redraft.numpy
# fills this at its import (see install_numpy_api), which any import of redraft runs before
# an Array can exist, so the runtime never imports upward.
_NUMPY_API: dict = {}


def install_numpy_api(jnp, index_update) -> None:
    """Called once by redraft.numpy: the namespace and the scatter `.at[]` updates use."""
    _NUMPY_API["jnp"] = jnp
    _NUMPY_API["index_update"] = index_update


def install_index_modes(at_get_mode, at_update_mode, static_out_of_bounds) -> None:
    """Called once by redraft.numpy: the out-of-bounds-aware `.at[]` forms
    (redraft/numpy/indexing.py) that `mode=`/`fill_value=` and out-of-range ints take."""
    _NUMPY_API["at_get_mode"] = at_get_mode
    _NUMPY_API["at_update_mode"] = at_update_mode
    _NUMPY_API["static_out_of_bounds"] = static_out_of_bounds


def _np_api():
    return _NUMPY_API["jnp"]


def recorder_in(*values):
    """The first stand-in value among `values` (or the items of a tuple among them) that
    records operations instead of computing them: compiler/tracing's Tracer, which a
    function without readable source is run on. A concrete array indexed by it or updated
    with it has no reflected operator to defer to, so indexing asks this instead."""
    for value in values:
        for item in value if type(value) is tuple else (value,):
            if hasattr(type(item), "__redraft_update__"):
                return item
    return None


def _update(array: Array, index, values, mode: str) -> Array:
    return _NUMPY_API["index_update"](array, index, values, mode)
