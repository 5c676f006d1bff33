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


# ---- JAX's option objects whose other settings redraft does not have --------------------------

class State:
    """One of JAX's option objects (`jax.enable_checks`, `jax.default_prng_impl`, ...):
    `.value` reads it, and `with jax.enable_checks(True):` sets it inside a block. redraft
    accepts only the settings under which it already behaves as JAX does on one CPU device
    (`accepted`); any other is refused rather than silently ignored."""

    def __init__(self, name: str, value, accepted: tuple, why: str):
        self.name = name
        self.value = value
        self._accepted = accepted
        self._why = why

    def __call__(self, new_val=True) -> contextlib.AbstractContextManager:
        self._check(new_val)
        return self._set(new_val)

    @contextlib.contextmanager
    def _set(self, new_val) -> Iterator[None]:
        old, self.value = self.value, new_val
        try:
            yield
        finally:
            self.value = old

    def _check(self, new_val) -> None:
        if new_val not in self._accepted:
            raise NotImplementedError(f"jax_{self.name}={new_val!r} is not available in "
                                      f"redraft: {self._why}")

    def __repr__(self) -> str:
        return f"State(jax_{self.name}={self.value!r})"


_NO_EXTRA_CHECKS = "redraft has no internal checks to turn on or off"
enable_checks = State("enable_checks", False, (False, True), _NO_EXTRA_CHECKS)
jax2tf_associative_scan_reductions = State(
    "jax2tf_associative_scan_reductions", False, (False, True), "it applies to jax2tf only")
array_garbage_collection_guard = State(
    "array_garbage_collection_guard", None, (None, "allow"),
    "arrays are freed by Python's reference counting, without a guard")
default_prng_impl = State("default_prng_impl", "threefry2x32", ("threefry2x32",),
                          "redraft.random implements threefry2x32 only")
threefry_partitionable = State("threefry_partitionable", True, (True,),
                               "redraft.random draws the bits of JAX's partitionable form")
enable_custom_prng = State("enable_custom_prng", False, (False,),
                           "redraft.random has no custom PRNG implementations")
legacy_prng_key = State("legacy_prng_key", "allow", ("allow",),
                        "redraft does not warn about or refuse raw uint32 keys")
debug_key_reuse = State("debug_key_reuse", False, (False,),
                        "redraft does not track the use of random keys")
check_tracer_leaks = State("check_tracer_leaks", False, (False,),
                           "redraft does not track leaked staged values")
softmax_custom_jvp = State("softmax_custom_jvp", False, (False,),
                           "redraft differentiates softmax through its definition")
allow_f16_reductions = State("allow_f16_reductions", True, (True,),
                             "float16 reductions accumulate as they always do in redraft")
thread_guard = State("thread_guard", False, (False,), "redraft has no thread guard")

STATES = ("enable_checks", "jax2tf_associative_scan_reductions",
          "array_garbage_collection_guard", "default_prng_impl", "threefry_partitionable",
          "enable_custom_prng", "legacy_prng_key", "debug_key_reuse", "check_tracer_leaks",
          "softmax_custom_jvp", "allow_f16_reductions", "thread_guard")
__all__ += list(STATES)
