"""Call the built physics module from plain Python (NumPy only: no redraft needed).

    redraft build examples/aot/physics.py --out build/physics
    python examples/aot/use_physics.py build/physics
"""
import sys

import numpy as np

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "build/physics")
import physics  # the built package

x = np.sin(np.linspace(0.0, np.pi, 64)).astype(np.float32)
v = np.zeros(64, np.float32)
for _ in range(100):
    x, v = physics.step(x, v, np.float32(0.05))
print("energy after 100 steps:", physics.energy({"x": x, "v": v}))
gx, gv = physics.loss_grad(x, v, np.zeros(64, np.float32))
print("|d loss / d x0| =", float(np.linalg.norm(gx)), " |d loss / d v0| =",
      float(np.linalg.norm(gv)))
xs, vs = physics.batched_step(np.tile(x, (16, 1)), np.tile(v, (16, 1)), np.float32(0.05))
print("batched step:", xs.shape, "same as one step:", np.allclose(xs[3], physics.step(
    x, v, np.float32(0.05))[0]))
print("redraft imported:", "redraft" in sys.modules)
