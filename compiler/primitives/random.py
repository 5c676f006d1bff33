"""Random numbers inside compiled code: one primitive that runs a redraft.random sampler.

redraft.random computes samples with the Threefry kernels of kernels/threefry.py on host
key words. When a key (or a seed, or a sampler's parameter) is only known when compiled
code runs, the sampler is recorded as `random_sample(key words, operands...)`; running it
calls the same host function eager code calls, so compiled and eager samples are the same
bits. Samplers are named (`SAMPLERS`), so the equation's parameters stay hashable and
printable. The primitive carries no derivative (random bits are not differentiable
functions of the key) and is batched by a loop over the examples, as redraft.random's
samplers are; this family file declares both (compiler/primitives/registry.py).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from redraft.compiler.core.abstract import ShapedArray, abstract_eval_rules
from redraft.compiler.primitives.base import Primitive, WeakRule
from redraft.runtime.eager import bind, impl_rules
from redraft.compiler.primitives.registry import defbatch_loop, defnondiff, names_primitive

FAMILY = "random"

# sampler name -> host function (NumPy arrays in, one NumPy array out); redraft.random
# registers its samplers here
SAMPLERS: dict[str, Callable[..., np.ndarray]] = {}

random_sample_p = Primitive("random_sample", FAMILY, WeakRule.NEVER)


def _impl(*operands: np.ndarray, sampler: str, shape: tuple[int, ...], dtype: str,
          static: tuple = ()) -> np.ndarray:
    kwargs = dict(static)
    names = kwargs.pop("operand_names", ())  # keyword operands after the first
    kwargs.update(zip(names, operands[1:]))
    out = SAMPLERS[sampler](*operands[:len(operands) - len(names)], **kwargs)
    out = np.asarray(out)
    if out.shape != shape or out.dtype != np.dtype(dtype):
        raise AssertionError(f"random sampler {sampler} gave {out.dtype}{list(out.shape)}, "
                             f"declared {dtype}{list(shape)}")
    return out


def _abstract(*operands: ShapedArray, sampler: str, shape: tuple[int, ...], dtype: str,
              static: tuple = ()) -> ShapedArray:
    if sampler not in SAMPLERS:
        raise TypeError(f"random_sample: no sampler named {sampler!r}")
    return ShapedArray(tuple(shape), np.dtype(dtype), False)


impl_rules[random_sample_p] = _impl
abstract_eval_rules[random_sample_p] = _abstract


def random_sample(sampler: str, operands: tuple, shape: tuple[int, ...], dtype,
                  static: dict | None = None):
    """Run (or, with staged operands, record) SAMPLERS[sampler](*operands, **static), whose
    result has `shape` and `dtype`; operands are redraft Arrays. The last operands are
    passed by keyword when static["operand_names"] names them."""
    return bind(random_sample_p, *operands, sampler=sampler, shape=tuple(shape),
                dtype=np.dtype(dtype).name, static=tuple(sorted((static or {}).items())))


names_primitive(random_sample, random_sample_p)
defnondiff(random_sample_p, "random bits are not a differentiable function of the key")
defbatch_loop(random_sample_p, "each example's numbers come from its own key, as the unbatched "
              "calls draw them", returns="any")
