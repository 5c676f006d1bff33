"""redraft.scipy: special, stats, linalg, signal, optimize, integrate and interpolate, as
jax.scipy. As there, every submodule is an attribute of the package (`jsp.stats.norm` after
`import redraft.scipy as jsp`): the ones not imported here load on first use."""
import importlib

from redraft.scipy import integrate, interpolate, linalg, optimize, signal  # noqa: F401

_LAZY = ("special", "stats")


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
