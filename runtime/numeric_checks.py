"""JAX's jax_debug_nans and jax_debug_infs: a NaN or an infinity in a result is an error.

Eager operations check each primitive's result (runtime/eager.py calls `check` when
config.DEBUG_CHECKS is on), so the error names the primitive that made the value, as JAX's
does. A jitted function checks its outputs and, on a bad one, runs again op by op to find
the operation (redraft/jit.py).
"""
from __future__ import annotations

import numpy as np

from redraft.runtime.config import config


def bad_value(buf) -> str | None:
    """'nan' or 'inf' when `buf` (a host array) holds one that a check is on for."""
    buf = np.asarray(buf)
    if buf.dtype.kind not in "fc" or buf.size == 0:
        return None
    if config.jax_debug_nans and np.isnan(buf).any():
        return "nan"
    if config.jax_debug_infs and np.isinf(buf).any():
        return "inf"
    return None


def check(name: str, out) -> None:
    """Raise FloatingPointError when primitive `name`'s result(s) `out` hold a NaN or an
    infinity that the configuration checks for."""
    for buf in out if isinstance(out, (tuple, list)) else (out,):
        kind = bad_value(buf)
        if kind is not None:
            raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")
