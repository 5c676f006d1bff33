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


# The map from a generated file's lines to the user's lines lives with the loader that writes
# those files (compiler/core/loader.py, a layer above); it installs its lookup here at import.
# Before that no generated code exists, so there is nothing to look up.
_ORIGIN_LOOKUP: dict = {}


def install_origin_lookup(lookup) -> None:
    """Called by the loader: `lookup(filename, lineno)` gives the user's (file, line)."""
    _ORIGIN_LOOKUP["lookup"] = lookup


def user_frames_note(exc: BaseException) -> str | None:
    """'raised at <user file>:<line>' for the innermost generated frame of `exc`'s traceback
    whose line is known to come from the user's code."""
    user_origin = _ORIGIN_LOOKUP.get("lookup")
    if user_origin is None:
        return None
    tb = exc.__traceback__
    found = None
    while tb is not None:
        origin = user_origin(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        if origin is not None:
            found = origin
        tb = tb.tb_next
    if found is None:
        return None
    return f"redraft: raised in code generated from {found[0]}:{found[1]}"


def prefix_user_origin(exc: BaseException) -> None:
    """Start `exc`'s message with the user's file and line when it was raised inside code
    redraft generated (the note says which user line the generated line came from)."""
    note = user_frames_note(exc)
    if note is None:
        return
    where = note.rsplit(" ", 1)[-1]
    if exc.args and isinstance(exc.args[0], str) and not exc.args[0].startswith(where):
        exc.args = (f"{where}: {exc.args[0]}",) + tuple(exc.args[1:])
    elif not exc.args:
        exc.args = (where,)
    if hasattr(exc, "add_note"):
        exc.add_note(note)
