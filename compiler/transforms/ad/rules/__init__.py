"""Derivative rules, one file per family of operations. Importing registers them all."""
from redraft.compiler.transforms.ad.rules import (control, elementwise, helpers,  # noqa: F401
                                                  reductions,
                                                  shapes, structure, lax_elementwise, linalg,
                                                  lax_structure, jnp_extra, random, vmap,
                                                  lax_composed, lax_special)
from redraft.compiler.transforms.ad.rules import indexing_modes  # noqa: E402,F401
