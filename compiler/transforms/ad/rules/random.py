"""Random numbers carry no derivative: a sample is not a differentiable function of its key
(redraft.random's samplers are recorded as compiler/primitives/random.py's primitive)."""
from redraft.compiler.primitives.random import random_sample
from redraft.compiler.transforms.ad.registry import defnondiff

defnondiff(random_sample, "random bits are not a differentiable function of the key")
