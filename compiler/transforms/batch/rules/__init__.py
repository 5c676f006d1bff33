"""Batching rules, one file per family of operations. Importing registers them all (an
explicit rule always wins over the source-or-loop default that misc.py gives the rest)."""
from redraft.compiler.transforms.batch.rules import (ad_helpers, collectives,  # noqa
                                                     control, creation, elementwise, indexing,
                                                     linalg, misc, products, random,
                                                     reductions, shapes, structure,
                                                     transforms, vmap_helpers, lax_composed,
                                                     lax_special)

from redraft.compiler.transforms.batch.rules import indexing_modes  # noqa: E402,F401

misc.register_numpy_library()
