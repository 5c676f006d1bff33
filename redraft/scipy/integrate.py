"""redraft.scipy.integrate, as jax.scipy.integrate: the trapezoidal rule."""
from __future__ import annotations

from redraft.numpy.statistics import trapezoid

__all__ = ["trapezoid"]
