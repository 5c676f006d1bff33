"""Collectives between the participants of a pmap: named axes, rendezvous, reductions.

pmap runs its function once per device, each on a thread of its own (runtime code releases
the GIL in NumPy and in compiled code). A thread knows the mapped axes it runs under from a
thread-local stack of AxisFrames; `lax.psum(x, 'i')` looks up the frame named 'i' and
exchanges values with the other participants through the frame's Group.

A Group is a rendezvous of `size` local threads: every participant deposits its value, the
last one to arrive combines them, and all leave with the result. When the axis also spans
processes (redraft.distributed under mpirun), the combining thread runs the MPI collective
on the combined host buffer before the others leave, so each process makes one MPI call per
collective whatever its number of local devices. Waits are bounded (REDRAFT_COLLECTIVE_TIMEOUT
seconds, 60 by default): a participant that fails or never arrives stops the others with a
CollectiveError naming the collective, never a hang.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


class CollectiveError(RuntimeError):
    """A collective could not complete: a participant failed, or did not arrive in time."""


def timeout_seconds() -> float:
    return float(os.environ.get("REDRAFT_COLLECTIVE_TIMEOUT", "60"))


class _Round:
    """The rendezvous state of one set of participants: values deposited so far."""

    def __init__(self, size: int):
        self.values: list = [None] * size
        self.arrived = 0
        self.generation = 0
        self.result: Any = None


class Group:
    """A rendezvous of `size` threads of this process, optionally joined across processes
    by `remote` (an MPI communicator wrapper, see redraft.distributed).

    Under nested maps several sets of participants share one Group: a collective over the
    outer axis combines the values of the threads with the same inner indices, so each
    set (keyed by those indices) has a rendezvous of its own."""

    def __init__(self, size: int, remote: Any = None):
        self.size = size
        self.remote = remote
        self._cond = threading.Condition()
        self._rounds: dict[tuple, _Round] = {}
        self._failure: BaseException | None = None

    def abort(self, index: int, error: BaseException) -> None:
        """Participant `index` failed: every wait, now or later, raises instead."""
        with self._cond:
            if self._failure is None:
                self._failure = CollectiveError(
                    f"participant {index} of the mapped axis failed ({type(error).__name__}: "
                    f"{error}); the collectives of the others cannot complete")
            self._cond.notify_all()

    def exchange(self, index: int, value: Any, combine: Callable[[list], Any], what: str,
                 key: tuple = ()):
        """Deposit `value`; returns `combine(all values in participant order)`, computed once
        by the last thread of set `key` to arrive and shared by all of them."""
        if self.size == 1:  # nobody to wait for
            self._check(what)
            return combine([value])
        with self._cond:
            self._check(what)
            r = self._rounds.setdefault(key, _Round(self.size))
            generation = r.generation
            r.values[index] = value
            r.arrived += 1
            if r.arrived == self.size:
                try:
                    r.result = combine(list(r.values))
                except BaseException as e:  # the others must not wait for a result
                    self._failure = CollectiveError(f"{what} failed: {e}")
                    self._cond.notify_all()
                    raise
                r.values = [None] * self.size
                r.arrived = 0
                r.generation += 1
                self._cond.notify_all()
                return r.result
            limit = timeout_seconds()
            deadline = time.monotonic() + limit
            while r.generation == generation:
                self._check(what)
                left = deadline - time.monotonic()
                if left <= 0:
                    self._failure = CollectiveError(
                        f"{what} timed out after {limit:g} s: only {r.arrived} of "
                        f"{self.size} participants arrived (one stopped or took another "
                        "path; REDRAFT_COLLECTIVE_TIMEOUT sets the limit)")
                    self._cond.notify_all()
                    raise self._failure
                self._cond.wait(timeout=left)
            return r.result

    def _check(self, what: str) -> None:
        if self._failure is not None:
            raise CollectiveError(f"{what}: {self._failure}")


@dataclass(frozen=True)
class AxisFrame:
    """One mapped axis this thread runs under: its name, its global size, this participant's
    global index, its local index in `group`, and the group's first global index."""
    name: Any
    size: int
    index: int
    local_index: int
    group: Group
    first: int = 0  # the global index of local participant 0


_local = threading.local()


def frames() -> list[AxisFrame]:
    if not hasattr(_local, "frames"):
        _local.frames = []
    return _local.frames


class bound:
    """`with bound(frame):` runs a block under the named axis `frame`."""

    def __init__(self, frame: AxisFrame):
        self.frame = frame

    def __enter__(self) -> AxisFrame:
        frames().append(self.frame)
        return self.frame

    def __exit__(self, *exc) -> None:
        frames().pop()


def frame_of(axis_name: Any, what: str) -> AxisFrame:
    """The innermost frame named `axis_name`; a NameError (as JAX's) when none is bound."""
    return _find(axis_name, what)[0]


def _participants(axis_name: Any, what: str) -> tuple[AxisFrame, tuple]:
    """The frame of `axis_name` and the key of this thread's set of participants in it: its
    indices along the axes bound inside that one (nested maps)."""
    frame, position = _find(axis_name, what)
    return frame, tuple(f.index for f in frames()[position + 1:])


def _find(axis_name: Any, what: str) -> tuple[AxisFrame, int]:
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            raise NotImplementedError(f"{what} over several axes {tuple(axis_name)!r}: redraft "
                                      "reduces over one named axis at a time")
        axis_name = axis_name[0]
    stack = frames()
    for position in range(len(stack) - 1, -1, -1):
        if stack[position].name == axis_name:
            return stack[position], position
    bound_names = [f.name for f in frames()]
    raise NameError(f"unbound axis name: {axis_name!r} in {what} (bound here: "
                    f"{bound_names or 'none'}; collectives run inside pmap(f, axis_name=...))")


# ---- the collectives on host arrays ---------------------------------------------------------

_REDUCERS = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _reduce_local(values: list, op: str) -> np.ndarray:
    out = np.array(values[0], copy=True)
    for v in values[1:]:
        _REDUCERS[op](out, v, out=out)
    return out


def all_reduce(x: np.ndarray, axis_name: Any, op: str, what: str) -> np.ndarray:
    """The elementwise `op` ('sum', 'max', 'min') of `x` over every participant of the axis."""
    frame, key = _participants(axis_name, what)
    x = np.asarray(x)

    def combine(values):
        remote = frame.group.remote
        if len(values) == 1:  # arrays are immutable: no copy on the way through
            if remote is None:
                return values[0]
            return remote.all_reduce(np.ascontiguousarray(values[0]), op)  # into a new buffer
        out = _reduce_local(values, op)
        if remote is not None:
            remote.all_reduce_inplace(out, op)
        return out

    return frame.group.exchange(frame.local_index, x, combine, what, key)


def group_of(axis_name: Any, groups: tuple, what: str) -> tuple[int, ...]:
    """The group of `groups` (axis_index_groups) that this participant belongs to."""
    index = frame_of(axis_name, what).index
    return next(g for g in groups if index in g)


def grouped_all_reduce(x: np.ndarray, axis_name: Any, op: str, groups: tuple,
                       what: str) -> np.ndarray:
    """all_reduce within this participant's group of `groups`: every participant's value is
    gathered, and each group reduces its own rows (one exchange whatever the grouping)."""
    rows = all_gather(x, axis_name, what)[list(group_of(axis_name, groups, what))]
    return _reduce_local(list(rows), op)


def all_gather(x: np.ndarray, axis_name: Any, what: str) -> np.ndarray:
    """Every participant's `x`, stacked along a new leading axis in axis-index order."""
    frame, key = _participants(axis_name, what)
    x = np.asarray(x)

    def combine(values):
        local = np.stack(values)
        if frame.group.remote is not None:
            return frame.group.remote.all_gather(local)
        return local

    return frame.group.exchange(frame.local_index, x, combine, what, key)


def permute(x: np.ndarray, axis_name: Any, perm: tuple, what: str) -> np.ndarray:
    """ppermute: participant `dst` receives `x` of `src` for each (src, dst) in `perm`;
    participants no pair sends to receive zeros."""
    frame = frame_of(axis_name, what)
    sources = {}
    for src, dst in perm:
        if not (0 <= src < frame.size and 0 <= dst < frame.size):
            raise ValueError(f"{what}: pair {(src, dst)} is outside the axis of size "
                             f"{frame.size}")
        if dst in sources:
            raise ValueError(f"{what}: participant {dst} receives twice in {perm}")
        sources[dst] = src
    if len({s for s, _ in perm}) != len(perm):
        raise ValueError(f"{what}: a participant sends twice in {perm}")
    gathered = all_gather(x, axis_name, what)
    src = sources.get(frame.index)
    return np.zeros_like(np.asarray(x)) if src is None else np.array(gathered[src])


def axis_size(axis_name: Any, what: str = "axis_size") -> int:
    return frame_of(axis_name, what).size


def axis_index(axis_name: Any, what: str = "axis_index") -> int:
    return frame_of(axis_name, what).index
