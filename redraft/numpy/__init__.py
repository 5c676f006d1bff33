"""redraft.numpy: the NumPy API over immutable redraft Arrays, written on redraft.lax.

Types promote as in JAX (32-bit defaults, weakly typed Python scalars); every function
ends in lax primitives, the only operations the transforms and the compiler must know.
"""
from redraft.numpy.base import *  # noqa: F401,F403
from redraft.numpy import linalg  # noqa: F401
from redraft.numpy import fft  # noqa: F401
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
from redraft.numpy.number_parts import *  # noqa: F401,F403
from redraft.numpy.bessel import *  # noqa: F401,F403
from redraft.numpy.polynomial_roots import *  # noqa: F401,F403
from redraft.numpy.ufunc_objects import *  # noqa: F401,F403
from redraft.numpy.methods import install_methods as _install_methods

import sys as _sys

_install_methods(_sys.modules[__name__])
