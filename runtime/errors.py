"""Errors users of JAX know by name, raised where redraft meets the same situation."""
from __future__ import annotations


class RedraftError(Exception):
    """Base of redraft's own errors."""


class NonConcreteBooleanIndexError(IndexError, RedraftError):
    """A boolean mask index whose values are not known when the shape must be."""


class TracerBoolConversionError(TypeError, RedraftError):
    """A Python `bool()` of a value only known at run time, where no branch can be built."""


class ConcretizationTypeError(TypeError, RedraftError):
    """A value only known at run time was used where Python needs a concrete value."""


class UnexpectedTracerError(RedraftError):
    """A staged value escaped the function being compiled."""
