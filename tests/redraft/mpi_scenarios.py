"""Run under mpirun by test_distributed.py: one way for a 2-rank job to go wrong per mode.

    mpirun -n 2 python tests/redraft/mpi_scenarios.py raise|hang|sizes|ok
"""
import sys
import time

import numpy as np

import redraft
from redraft import lax


def total(v):
    return lax.psum(v, "ranks")


def main(mode: str) -> None:
    redraft.distributed.initialize()
    rank = redraft.process_index()
    step = redraft.pmap(total, axis_name="ranks")
    local = 1 + (mode == "sizes" and rank == 1)
    if mode == "raise" and rank == 1:
        raise RuntimeError("rank 1 fails before its collective")
    if mode == "hang" and rank == 1:
        time.sleep(60)
    out = step(np.full((local, 3), rank + 1.0, np.float32))
    print(f"rank {rank}: {np.asarray(out).tolist()} of {redraft.device_count()} devices, "
          f"local {[d.id for d in redraft.local_devices()]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
