"""redraft.scipy: special, stats, linalg, signal and optimize, as jax.scipy."""
from redraft.scipy import linalg, optimize, signal  # noqa: F401
