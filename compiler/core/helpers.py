"""Runtime helpers that Core code calls where Python syntax has no single operation.

Each is a small pure function. Those that touch differentiable values have rules in
compiler/transforms/rules/, like any other operation.
"""
from __future__ import annotations


def check(cond, message="") -> None:
    """`assert cond, message` (kept under -O too: it guards user invariants)."""
    if not cond:
        raise AssertionError(message)


def raise_(exc) -> None:
    """`raise exc`."""
    if exc is None:
        raise RuntimeError("re-raise outside an except block")
    raise exc


def make_dict(keys: tuple, values: tuple) -> dict:
    """`{k: v, ...}`."""
    return dict(zip(keys, values))


def append(items: list, item) -> list:
    """A new list: `items + [item]` (Core never mutates a value another name may hold)."""
    return items + [item]


def astype(x, dtype):
    """`x.astype(dtype)` for any array-like."""
    import redraft.numpy as jnp
    return jnp.asarray(x).astype(dtype)


def at_set(x, idx, v):
    """`x.at[idx].set(v)`."""
    return x.at[idx].set(v)


def at_add(x, idx, v):
    """`x.at[idx].add(v)`."""
    return x.at[idx].add(v)


def at_multiply(x, idx, v):
    return x.at[idx].multiply(v)


def at_divide(x, idx, v):
    return x.at[idx].divide(v)


def at_subtract(x, idx, v):
    return x.at[idx].subtract(v)


def at_power(x, idx, v):
    return x.at[idx].power(v)


def at_min(x, idx, v):
    return x.at[idx].min(v)


def at_max(x, idx, v):
    return x.at[idx].max(v)


def at_get(x, idx):
    return x.at[idx].get()


AT_UPDATES = {"set": at_set, "add": at_add, "multiply": at_multiply, "divide": at_divide,
              "subtract": at_subtract, "power": at_power, "min": at_min, "max": at_max,
              "get": at_get}
