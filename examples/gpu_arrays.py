"""Arrays on a GPU: parameters put on the device once, a jitted training step that keeps
them there, and the loss read back at the end. Without a GPU, try it on the emulated one:

    REDRAFT_EMULATE_GPU=1 python examples/gpu_arrays.py
"""
import numpy as np

import redraft
from gpu_kernels import mlp_loss, mlp_step


def main() -> None:
    gpu = redraft.devices("gpu")[0]
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((784, 512)).astype(np.float32) * 0.03,
              np.zeros(512, np.float32),
              rng.standard_normal((512, 10)).astype(np.float32) * 0.03,
              np.zeros(10, np.float32)]
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    params, x, y = redraft.device_put((params, x, y), gpu)
    step, loss = redraft.jit(mlp_step), redraft.jit(mlp_loss)
    print(f"on {gpu} ({gpu.device_kind}): loss {float(loss(*params, x, y)):.4f}")
    for _ in range(20):
        params = step(*params, x, y)  # queued; the parameters never leave the device
    params[0].block_until_ready()
    print(f"after 20 steps: loss {float(loss(*params, x, y)):.4f}, "
          f"parameters on {params[0].device}")


if __name__ == "__main__":
    main()
