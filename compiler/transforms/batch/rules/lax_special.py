"""Batching of lax's special functions (redraft/scipy/special_functions/lax_forms.py), of its
structural and bit conveniences (redraft/lax/structure.py, bits.py) and of the helpers their
derivative rules call: vmap reads their source, compositions of lax and redraft.numpy
functions with batching rules of their own. select_n takes its cases as *args, which source
batching cannot read: it is elementwise (its operands broadcast together), and batched as
such."""
from redraft import lax
from redraft.compiler.primitives.registry import ELEMENTWISE
from redraft.compiler.transforms.ad.rules import lax_special as rules
from redraft.compiler.transforms.batch.batching import defbatch, defbatch_source
from redraft.lax import structure
from redraft.scipy.special_functions import incomplete_gamma, lax_forms

for _fn in (lax_forms.igamma, lax_forms.igammac, lax_forms.igamma_grad_a, lax_forms.polygamma,
            lax_forms.zeta, lax_forms.betainc,
            rules.igamma_density, rules.igamma_grad_a_slope_x, rules.betainc_slope_x,
            rules.select_n_mask, rules.select_n_part,
            lax.broadcast_like, lax.empty, lax.index_take, structure.index_take_scatter,
            lax.optimization_barrier, lax.stack, lax.unstack, lax.bitcast_convert_type,
            lax.reduce_precision, lax.mulhi, incomplete_gamma.digamma,
            lax.conv_general_dilated_patches, rules.patches_cotangent):
    defbatch_source(_fn)
defbatch(lax.select_n, ELEMENTWISE)
