"""Regenerate image_reference.npz: JAX 0.10.2's jax.image results on fixed inputs, for
test_image.py. Run with JAX installed (not a test dependency; the .npz is the data):

    python tests/redraft/image/make_reference.py

Each case is stored as '<name>/input', '<name>/output' (and gradients where asked), with
its parameters in the JSON string under 'cases'.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

DATA = pathlib.Path(__file__).with_name("image_reference.npz")

METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
# (input shape, output shape): 1-D up and down, 2-D mixed and down, 3-D, batch and channel
# dimensions kept (2 and 3), an identity resize
SHAPES = [((7,), (13,)), ((13,), (5,)), ((6, 5), (9, 3)), ((8, 8), (3, 4)),
          ((4, 5, 6), (3, 8, 7)), ((2, 6, 5, 3), (2, 9, 4, 3)), ((5, 4), (5, 4))]
INT_SHAPES = [((6, 5), (9, 3)), ((9,), (4,))]
# (scale, translation) on spatial dimensions (0, 1) of a (6, 7, 2) image -> (9, 5, 2)
WARPS = [((1.7, 0.6), (0.3, -1.2)), ((0.45, 2.0), (2.5, 0.0)), ((3.0, 0.5), (-4.0, 1.0))]
GRAD_METHODS = ["linear", "lanczos3", "cubic", "area"]
NEAREST_MAX = 41


def _input(shape, dtype, seed) -> np.ndarray:
    rng = np.random.RandomState(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.randint(0, 256, size=shape).astype(dtype)
    return rng.randn(*shape).astype(dtype)


def _resize_cases():
    seed = 0
    for method in METHODS:
        for antialias in ([True] if method == "nearest" else [True, False]):
            for shapes, dtype in ([(s, "float32") for s in SHAPES]
                                  + [(s, d) for s in INT_SHAPES for d in ("uint8", "int32")]):
                seed += 1
                yield {"kind": "resize", "method": method, "antialias": antialias,
                       "in_shape": shapes[0], "out_shape": shapes[1], "dtype": dtype,
                       "seed": seed}


def _warp_cases():
    seed = 1000
    for method in METHODS[1:]:
        for antialias in (True, False):
            for scale, translation in WARPS:
                seed += 1
                yield {"kind": "warp", "method": method, "antialias": antialias,
                       "in_shape": (6, 7, 2), "out_shape": (9, 5, 2), "spatial_dims": (0, 1),
                       "scale": scale, "translation": translation, "dtype": "float32",
                       "seed": seed, "grad": method in GRAD_METHODS}
    # one spatial dimension named from the end, downsampling a (3, 10) signal
    yield {"kind": "warp", "method": "lanczos3", "antialias": True, "in_shape": (3, 10),
           "out_shape": (3, 4), "spatial_dims": (-1,), "scale": (0.4,),
           "translation": (0.25,), "dtype": "float32", "seed": 2000, "grad": True}


def main() -> None:
    import jax
    import jax.numpy as jnp

    arrays, cases = {}, []
    for i, case in enumerate(list(_resize_cases()) + list(_warp_cases())):
        name = f"{case['kind']}{i}"
        x = _input(case["in_shape"], np.dtype(case["dtype"]), case["seed"])
        arrays[f"{name}/input"] = x
        if case["kind"] == "resize":
            out = jax.image.resize(x, case["out_shape"], case["method"],
                                   antialias=case["antialias"])
        else:
            def warp(s, t, x=x, case=case):
                return jax.image.scale_and_translate(
                    x, case["out_shape"], case["spatial_dims"], s, t, case["method"],
                    antialias=case["antialias"])
            s = jnp.asarray(case["scale"], jnp.float32)
            t = jnp.asarray(case["translation"], jnp.float32)
            out = warp(s, t)
            if case["grad"]:
                # d/d(scale, translation) of sum(out * cos(index)), a fixed linear read-out
                weights = np.cos(np.arange(out.size, dtype=np.float32)).reshape(out.shape)
                ds, dt = jax.grad(lambda s, t: jnp.sum(warp(s, t) * weights),
                                  argnums=(0, 1))(s, t)
                arrays[f"{name}/dscale"] = np.asarray(ds)
                arrays[f"{name}/dtranslation"] = np.asarray(dt)
        arrays[f"{name}/output"] = np.asarray(out)
        cases.append({"name": name, **case})
    # nearest's index rule over every (in, out) size pair up to 40: where float32 rounding
    # of (j + 0.5) * in / out decides which neighbour is taken
    arrays["nearest_indices"] = np.concatenate([
        np.asarray(jax.image.resize(np.arange(m, dtype=np.int32), (n,), "nearest"))
        for m in range(1, NEAREST_MAX) for n in range(1, NEAREST_MAX)])
    arrays["cases"] = np.array(json.dumps(cases))
    np.savez_compressed(DATA, **arrays)
    print(f"{len(cases)} cases -> {DATA} ({DATA.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
