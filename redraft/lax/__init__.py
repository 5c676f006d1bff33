"""redraft.lax: the strict primitive layer. Mixed dtypes are refused, not promoted.

Every function here applies one primitive (or a few, for conveniences such as `dot`); the
primitives and all their rules live in redraft.compiler.primitives, one file per family.
"""
from redraft.compiler.primitives.elementwise import (LAX_FUNCTIONS as _ELEMENTWISE, clamp,  # noqa
                                                     convert_element_type, integer_pow, round,
                                                     select)
from redraft.compiler.primitives.linalg import dot, dot_general  # noqa: F401
from redraft.compiler.primitives.reductions import (argmax, argmin, argsort, cummax,  # noqa
                                                    cummin, cumprod, cumsum, reduce_and,
                                                    reduce_max, reduce_min, reduce_or,
                                                    reduce_prod, reduce_sum)
from redraft.compiler.primitives.shape import (broadcast, broadcast_in_dim,  # noqa: F401
                                               broadcasted_iota, concatenate,
                                               dynamic_index_in_dim, dynamic_slice,
                                               dynamic_update_slice, expand_dims, iota, pad,
                                               reshape, rev, slice, squeeze, transpose)
from redraft.compiler.primitives.conv import (ConvDimensionNumbers, conv,  # noqa: F401
                                              conv_dimension_numbers, conv_general_dilated,
                                              conv_transpose, conv_with_general_padding)
from redraft.compiler.primitives.gather import (GatherDimensionNumbers,  # noqa: F401
                                                GatherScatterMode, ScatterDimensionNumbers,
                                                gather, scatter, scatter_add, scatter_max,
                                                scatter_min, scatter_mul)
from redraft.compiler.primitives.control import (cond, fori_loop, map,  # noqa: F401,A004
                                                 platform_dependent, scan, switch,
                                                 while_loop)
from redraft.compiler.primitives.fft import FftType, fft  # noqa: F401
from redraft.lax import linalg  # noqa: F401
from redraft.compiler.primitives.collectives import (all_gather, all_to_all,  # noqa: F401
                                                     axis_index, axis_size, pmax, pmean, pmin,
                                                     ppermute, pshuffle, psum, psum_scatter)
from redraft.compiler.primitives.conv import padtype_to_pads  # noqa: F401
from redraft.lax.types import (ConvGeneralDilatedDimensionNumbers,  # noqa: F401
                               DotDimensionNumbers, Precision, PrecisionLike, RoundingMethod)
from redraft.lax.slicing import (batch_matmul, broadcast_shapes, broadcast_to_rank,  # noqa
                                 collapse, dtype, dynamic_slice_in_dim,
                                 dynamic_update_index_in_dim, dynamic_update_slice_in_dim, full,
                                 full_like, index_in_dim, reciprocal, slice_in_dim, split,
                                 tile)
from redraft.lax.windows import (conv_general_permutations, conv_general_shape_tuple,  # noqa
                                 conv_shape_tuple, conv_transpose_shape_tuple, reduce,
                                 reduce_window, reduce_window_shape_tuple, reduce_xor)
from redraft.lax.scans import associative_scan, cumlogsumexp  # noqa: F401
from redraft.lax.sorting import (approx_max_k, approx_min_k, sort, sort_key_val,  # noqa: F401
                                 top_k)
from redraft.lax.special import bessel_i0e, bessel_i1e  # noqa: F401
from redraft.random.gamma import random_gamma_grad  # noqa: F401
from redraft.lax.bits import (bitcast_convert_type, complex, mulhi,  # noqa: F401,A004
                              reduce_precision)
from redraft.lax.structure import (broadcast_like, empty, index_take,  # noqa: F401
                                   optimization_barrier, select_n, stack, unstack)
from redraft.lax.scatter_updates import scatter_apply, scatter_sub  # noqa: F401
from redraft.lax.ragged import ragged_dot  # noqa: F401
from redraft.lax.rng import RandomAlgorithm, rng_bit_generator  # noqa: F401
from redraft.lax.scaled import scaled_dot  # noqa: F401
from redraft.lax.patches import conv_general_dilated_patches  # noqa: F401
from redraft.lax.primitives import PRIMITIVES as _PRIMITIVES


globals().update(_ELEMENTWISE)
globals().update(_PRIMITIVES)  # add_p, sin_p, ...: the primitives the functions above apply
bitwise_not = _ELEMENTWISE["not"]
globals()["not_"] = bitwise_not
bitwise_and, bitwise_or, bitwise_xor = (_ELEMENTWISE[n] for n in ("and", "or", "xor"))
mul = _ELEMENTWISE["mul"]

# every public name above (computed last, so that none is missed)
__all__ = sorted(k for k in globals() if not k.startswith("_"))
