"""JAX's top-level switches that are also `with` blocks: debug_nans, debug_infs,
numpy_dtype_promotion, numpy_rank_promotion and the transfer guards, and live_arrays.

Each context manager sets its option of redraft.config (runtime/config.py says what each
does) inside the block and restores it after, as `with jax.debug_nans(True):` does; the
same options can be set for good with `redraft.config.update("jax_debug_nans", True)`.
"""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator

from redraft.runtime.array import Array
from redraft.runtime.config import option
from redraft.runtime.staged import StagedBuf

__all__ = ["debug_nans", "debug_infs", "numpy_dtype_promotion", "numpy_rank_promotion",
           "transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device", "live_arrays"]


def debug_nans(new_val: bool = True) -> contextlib.AbstractContextManager:
    """In the block, a NaN in an operation's result raises FloatingPointError."""
    return option("jax_debug_nans", new_val)


def debug_infs(new_val: bool = True) -> contextlib.AbstractContextManager:
    """In the block, an infinity in an operation's result raises FloatingPointError."""
    return option("jax_debug_infs", new_val)


def numpy_dtype_promotion(new_val: str) -> contextlib.AbstractContextManager:
    """"standard" or "strict": in a strict block redraft.numpy refuses to promote between
    different dtypes (a weak Python scalar of a kind the array holds still combines)."""
    return option("jax_numpy_dtype_promotion", new_val)


def numpy_rank_promotion(new_val: str) -> contextlib.AbstractContextManager:
    """"allow", "warn" or "raise" when an elementwise operation broadcasts arrays of
    different ranks."""
    return option("jax_numpy_rank_promotion", new_val)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """The guard level of every direction of host/GPU copies in the block
    (runtime/transfer_guard.py: redraft's CPU arrays are host memory and are never guarded)."""
    with option("jax_transfer_guard", new_val):
        yield


def transfer_guard_host_to_device(new_val: str) -> contextlib.AbstractContextManager:
    """The guard level of copies from the host to a GPU in the block."""
    return option("jax_transfer_guard_host_to_device", new_val)


def transfer_guard_device_to_host(new_val: str) -> contextlib.AbstractContextManager:
    """The guard level of copies from a GPU to the host in the block."""
    return option("jax_transfer_guard_device_to_host", new_val)


def transfer_guard_device_to_device(new_val: str) -> contextlib.AbstractContextManager:
    """The guard level of copies between GPUs in the block."""
    return option("jax_transfer_guard_device_to_device", new_val)


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every Array alive in this process with a value (not one being staged by jit), on
    `platform` ("cpu", "gpu") or on any. Found by walking the garbage collector's objects,
    so creating arrays costs nothing extra; the walk is slow, as a debugging aid may be."""
    found = []
    for obj in gc.get_objects():
        if type(obj) is not Array or not hasattr(obj, "_buf"):
            continue
        if type(obj._buf) is StagedBuf:
            continue
        if platform is None or obj.device.platform == platform:
            found.append(obj)
    return found
