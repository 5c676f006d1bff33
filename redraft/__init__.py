"""redraft: JAX's programming model as a source-to-source transforming compiler.

    import redraft
    import redraft.numpy as jnp

    redraft.grad(f)      # derivative source, readable (redraft.emit shows it)
    redraft.vmap(f)      # batched source: f over a batch axis, no Python loop
    redraft.jit(f)       # compiled through an SSA IR to LLVM (alias: redraft.compile)
"""
from redraft.runtime.array import Array  # noqa: F401
from redraft.runtime.config import config, enable_x64  # noqa: F401
from redraft.runtime.devices import Device, default_backend  # noqa: F401
from redraft.runtime.transfer import device_get, device_put  # noqa: F401
from redraft import numpy, lax, random, tree_util  # noqa: F401
from redraft.jit import compile, jit, make_ir, make_jaxpr  # noqa: F401,A004
from redraft.transforms import (custom_jvp, custom_vjp, emit, grad, hessian,  # noqa: F401
                                jacfwd, jacobian, jacrev, jvp, linearize, stop_gradient,
                                value_and_grad, vjp)
from redraft.custom_gradient import custom_gradient  # noqa: F401
from redraft.closures import closure_convert  # noqa: F401
from redraft.vmap import vmap  # noqa: F401
lax.stop_gradient = stop_gradient  # handed down: jax.lax.stop_gradient is this same function
# lax.igamma, zeta, betainc, ...: computed beside redraft.scipy.special's forms, handed down
from redraft.scipy.special_functions import lax_forms as _lax_forms  # noqa: E402
for _name in _lax_forms.__all__:
    setattr(lax, _name, getattr(_lax_forms, _name))
lax.__all__ = sorted(set(lax.__all__) | set(_lax_forms.__all__))
# lax.custom_root, custom_linear_solve: their rules call jvp and vjp, so they come after them
from redraft.lax import solves as _solves  # noqa: E402
lax.custom_linear_solve, lax.custom_root = _solves.custom_linear_solve, _solves.custom_root
lax.__all__ = sorted(set(lax.__all__) | set(_solves.__all__))
from redraft.export import export  # noqa: F401
from redraft import debug, nn, tree  # noqa: F401
from redraft.abstract import ShapeDtypeStruct, eval_shape, typeof  # noqa: F401
from redraft.linear import linear_transpose  # noqa: F401
from redraft.annotations import checkpoint, named_call, remat  # noqa: F401
from redraft.processes import (block_until_ready, device_count, host_count,  # noqa: F401
                               host_id, host_ids, local_device_count, local_devices,
                               process_count, process_index, process_indices, devices)
from redraft.pmap import pmap  # noqa: F401
from redraft import distributed  # noqa: F401
# callbacks, context managers, array construction, environment, reverse-mode extras, refs
from redraft.callbacks import effects_barrier, pure_callback  # noqa: F401
from redraft.contexts import (default_device, default_matmul_precision,  # noqa: F401
                              disable_jit, ensure_compile_time_eval, explain_cache_misses,
                              log_compiles, named_scope, no_tracing)
from redraft.array_creation import (copy_to_host_async, make_array_from_callback,  # noqa: F401
                                    make_array_from_process_local_data,
                                    make_array_from_single_device_arrays)
from redraft.environment import clear_caches, print_environment_info  # noqa: F401
from redraft.config_contexts import (  # noqa: F401
    allow_f16_reductions, array_garbage_collection_guard, check_tracer_leaks, debug_key_reuse,
    default_prng_impl, enable_checks, enable_custom_prng, jax2tf_associative_scan_reductions,
    legacy_prng_key, softmax_custom_jvp, thread_guard, threefry_partitionable)
from redraft.config_contexts import (debug_infs, debug_nans, live_arrays,  # noqa: F401
                                     numpy_dtype_promotion, numpy_rank_promotion,
                                     transfer_guard, transfer_guard_device_to_device,
                                     transfer_guard_device_to_host,
                                     transfer_guard_host_to_device)
from redraft.ad_extras import checkpoint_policies, float0, fwd_and_bwd  # noqa: F401
from redraft.refs import Ref, ds, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from redraft import sharding  # noqa: F401
from redraft.sharding import NamedSharding, P, make_mesh  # noqa: F401
lax.with_sharding_constraint = sharding.with_sharding_constraint
lax.__all__ = sorted(set(lax.__all__) | {"with_sharding_constraint"})
from redraft import ops  # noqa: F401
from redraft import image  # noqa: F401

from redraft.version import __version__  # noqa: E402,F401
