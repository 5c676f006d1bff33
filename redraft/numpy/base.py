"""The part of redraft.numpy written directly on lax: creation, ufuncs, reductions, shapes,
products, indexing, promotion, scalar types, searching, comparison.

The library modules (statistics, sets, windows, nan_reductions, ...) are written on these
functions and import this namespace as `jnp`; the package re-exports both. So the library
never imports the package that imports it, and the layers stay one way.
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
from redraft.numpy.arrays import *  # noqa: F401,F403
from redraft.numpy.searching import *  # noqa: F401,F403
from redraft.numpy.signal import *  # noqa: F401,F403
from redraft.numpy.einsum import *  # noqa: F401,F403
from redraft.numpy.comparison import *  # noqa: F401,F403
