"""redraft.numpy: the NumPy API over immutable redraft Arrays, written on redraft.lax.

Types promote as in JAX (32-bit defaults, weakly typed Python scalars); every function
ends in lax primitives, the only operations the transforms and the compiler must know.
"""
from numpy import (e, euler_gamma, inf, nan, newaxis, pi,  # noqa: F401
                   bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                   float16, float32, float64, complex64, complex128, dtype)

from redraft.runtime.array import Array as ndarray  # noqa: F401
from redraft.runtime.dtypes import finfo, iinfo  # noqa: F401
from redraft.numpy.creation import *  # noqa: F401,F403
from redraft.numpy.creation import array, asarray  # noqa: F401
from redraft.numpy.ufuncs import *  # noqa: F401,F403
from redraft.numpy.ufuncs import abs, round, divmod  # noqa: F401,A004
from redraft.numpy.reductions import *  # noqa: F401,F403
from redraft.numpy.reductions import sum, max, min, all, any  # noqa: F401,A004
from redraft.numpy.shapes import *  # noqa: F401,F403
from redraft.numpy.shapes import shape, ndim, size  # noqa: F401
from redraft.numpy.products import *  # noqa: F401,F403
from redraft.numpy.indexing import take, take_along_axis  # noqa: F401
from redraft.numpy.promotion import astype, promote_types, result_type  # noqa: F401
from redraft.numpy.scalar_types import *  # noqa: F401,F403
from redraft.numpy import linalg  # noqa: F401
from redraft.numpy import fft  # noqa: F401
from redraft.numpy.arrays import *  # noqa: F401,F403
from redraft.numpy.searching import *  # noqa: F401,F403
from redraft.numpy.signal import *  # noqa: F401,F403
from redraft.numpy.einsum import *  # noqa: F401,F403
from redraft.numpy.comparison import *  # noqa: F401,F403
from redraft.numpy.nan_reductions import *  # noqa: F401,F403
from redraft.numpy.statistics import *  # noqa: F401,F403
from redraft.numpy.polynomials import *  # noqa: F401,F403
from redraft.numpy.index_tricks import *  # noqa: F401,F403
from redraft.numpy.array_api_aliases import *  # noqa: F401,F403
from redraft.numpy.array_api_aliases import pow, copy  # noqa: F401,A004
from redraft.numpy.dtype_queries import *  # noqa: F401,F403
from redraft.numpy.dtype_queries import bool  # noqa: F401,A004
from redraft.numpy.windows import *  # noqa: F401,F403
from redraft.numpy.functional import *  # noqa: F401,F403
from redraft.numpy.sets import *  # noqa: F401,F403
from redraft.numpy.array_misc import *  # noqa: F401,F403
from redraft.numpy.methods import install_methods as _install_methods

import sys as _sys

_install_methods(_sys.modules[__name__])


def _register_library_batching() -> None:
    """Batching entries for the functions written here on other redraft.numpy functions:
    vmap reads their source (or loops over examples where Core cannot say them); the set
    operations whose result size depends on the values cannot be batched."""
    from redraft.compiler.transforms.batch_rules.misc import register_module
    from redraft.compiler.transforms.batching import defnotbatchable
    from redraft.numpy import (array_api_aliases, array_misc, dtype_queries, functional,
                               index_tricks, nan_reductions, polynomials, sets, statistics,
                               windows)
    for fn in (sets.intersect1d, sets.setdiff1d, sets.setxor1d):
        defnotbatchable(fn, "its result's size depends on the values of each example")
    for fn in (array_misc.get_printoptions, array_misc.set_printoptions,
               array_misc.printoptions):
        defnotbatchable(fn, "configures how arrays print; it takes no arrays")
    for fn in (array_misc.compress, array_misc.extract):
        defnotbatchable(fn, "its result's size depends on the values of each example")
    for module in (array_api_aliases, array_misc, dtype_queries, functional, index_tricks,
                   nan_reductions, polynomials, sets, statistics, windows):
        register_module(module)


_register_library_batching()
