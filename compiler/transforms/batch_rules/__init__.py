"""Batching rules, one file per family of operations. Importing registers them all (an
explicit rule always wins over the source-or-loop default that misc.py gives the rest)."""
from redraft.compiler.transforms.batch_rules import (ad_helpers, control, creation,  # noqa
                                                     elementwise, indexing, misc, products,
                                                     random, reductions, shapes, structure,
                                                     transforms, vmap_helpers)
from redraft.compiler.transforms.batch_rules import collectives  # noqa: E402,F401
