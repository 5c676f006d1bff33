"""redraft.scipy: special, stats and linalg, as jax.scipy."""
from redraft.scipy import linalg  # noqa: F401
