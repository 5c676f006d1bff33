"""Batching rules, one file per family of operations. Importing registers them all."""
from redraft.compiler.transforms.batch_rules import (ad_helpers, creation,  # noqa: F401
                                                     elementwise, indexing, products,
                                                     random, reductions, shapes, structure,
                                                     vmap_helpers)
