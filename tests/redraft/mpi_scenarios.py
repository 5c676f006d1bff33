"""Run under mpirun by test_distributed.py: one way for a 2-rank job to go wrong per mode.

    mpirun -n 2 python tests/redraft/mpi_scenarios.py raise|hang|sizes|ok|four
"""
import sys
import time

import numpy as np

import redraft
from redraft import lax


def total(v):
    return lax.psum(v, "ranks")


def collectives(v):
    index = lax.axis_index("ranks")
    return (lax.psum(v, "ranks"), lax.all_gather(v, "ranks"), index,
            lax.ppermute(v, "ranks", [(k, (k + 1) % 4) for k in range(4)]),
            lax.psum_scatter(lax.all_gather(v, "ranks"), "ranks"))


def four_devices() -> None:
    """2 ranks x 2 local devices: the axis spans all 4, numbered rank-major."""
    rank = redraft.process_index()
    values = np.arange(4, dtype=np.float32)[:, None] * np.ones((4, 2), np.float32)
    mine = values[2 * rank:2 * rank + 2]
    total, gathered, index, shifted, scattered = redraft.pmap(
        redraft.jit(collectives), axis_name="ranks")(mine)
    assert np.array_equal(np.asarray(total), np.full((2, 2), 6.0)), total
    assert np.array_equal(np.asarray(gathered), np.stack([values, values])), gathered
    assert np.asarray(index).tolist() == [2 * rank, 2 * rank + 1], index
    assert np.array_equal(np.asarray(shifted), np.roll(values, 1, axis=0)[2 * rank:][:2])
    assert np.array_equal(np.asarray(scattered), 4 * mine), scattered
    print(f"rank {rank}: 4 devices agree", flush=True)


def main(mode: str) -> None:
    redraft.distributed.initialize()
    rank = redraft.process_index()
    if mode == "four":
        return four_devices()
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
