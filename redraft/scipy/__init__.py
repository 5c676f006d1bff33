"""redraft.scipy: special, stats, linalg, signal, optimize, integrate and interpolate, as
jax.scipy."""
from redraft.scipy import integrate, interpolate, linalg, optimize, signal  # noqa: F401
