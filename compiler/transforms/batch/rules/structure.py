"""Batching rules of Python structure: tuples and lists of batched values, dicts, builtins that
read structure (len of a tuple), and the builtins that would need one example's value."""
import builtins
import operator

from redraft.compiler.core import helpers, ir
from redraft.compiler.frontend import local_functions
from redraft.compiler.transforms.runtime import ad
from redraft.runtime import pytree
from redraft.compiler.transforms.batch import batch_types as bt
from redraft.compiler.transforms.batch.rules.common import elementwise, loop, unbatched_result
from redraft.compiler.transforms.batch.batching import (NotStatic, defbatch, defbatch_source,
                                                       defnotbatchable)
from redraft.compiler.transforms.batch.vmap_refs import jnp_ref, vm_ref
from redraft.compiler.transforms.common import GETITEM, TransformError

import redraft.numpy as jnp


def _append(b):
    """append(items, item): a tuple type grows by one item; a list type joins."""
    items, item = b.call.args
    ti, tx = b.ctx.type_of(items), b.ctx.type_of(item)
    if isinstance(ti, bt.Tuple):
        return b.call, bt.tup((*ti.items, tx))
    elem = bt.join(bt.element(ti), tx)
    target = bt.seq(elem)
    items = b.ctx.convert(items, ti if ti is not bt.U else bt.seq(bt.U), target, b.out,
                          b.origin)
    item = b.ctx.convert(item, tx, elem, b.out, b.origin)
    return ir.Call(b.call.fn, (items, item)), target


def _values_of(b):
    """A dict type's values, in order, as a tuple type; any other batched value's leaves."""
    t = b.ctx.type_of(b.call.args[0])
    if isinstance(t, bt.Dict):
        return b.call, bt.tup(t.types)
    return b.call, bt.TREE if bt.is_batched(t) else bt.U


def _items_of(b):
    """A dict type's (key, value) pairs: each key unbatched, its value of its own type; of
    a dict whose keys are not known here (a Tree), a list of such pairs, each value a tree:
    keys never differ between examples, and stay the Python values they are."""
    t = b.ctx.type_of(b.call.args[0])
    if isinstance(t, bt.Dict):
        return b.call, bt.tup(tuple(bt.tup((bt.U, v)) for v in t.types))
    if isinstance(t, bt.Tree):
        return b.call, bt.seq(bt.tup((bt.U, bt.TREE)))
    return b.call, bt.TREE if bt.is_batched(t) else bt.U


def _iterated(kind: int, value: int):
    """The rule of iterated(xs) and its AD companions: argument `kind` is xs, whose kind
    decides (a dict's keys are unbatched); otherwise the result has argument `value`'s type."""
    def rule(b):
        if isinstance(b.ctx.type_of(b.call.args[kind]), bt.Dict):
            return b.call, bt.U
        return b.call, b.ctx.type_of(b.call.args[value])
    return rule


def _concat(b):
    """left + right of sequences: two tuple types join item by item; otherwise a list type
    whose element type joins both sides'."""
    left, right = b.call.args
    tl, tr = b.ctx.type_of(left), b.ctx.type_of(right)
    if isinstance(tl, bt.Tuple) and isinstance(tr, bt.Tuple):
        return b.call, bt.tup((*tl.items, *tr.items))
    elem = bt.join(bt.element(tl), bt.element(tr))
    target = bt.seq(elem)
    left = b.ctx.convert(left, tl if tl is not bt.U else bt.seq(bt.U), target, b.out,
                         b.origin)
    right = b.ctx.convert(right, tr if tr is not bt.U else bt.seq(bt.U), target, b.out,
                          b.origin)
    return ir.Call(b.call.fn, (left, right)), target


def _make_dict(b):
    """{k: v}: with its keys known, a dict type key by key; else every leaf batched."""
    keys, values = b.call.args
    tv = b.ctx.type_of(values)
    try:
        static_keys = b.static_atom(keys)
    except NotStatic:
        static_keys = None
    if static_keys is not None and isinstance(tv, bt.Tuple) and len(tv.items) == len(static_keys):
        return b.call, bt.dct(static_keys, tv.items)
    values = b.to_batched(values, tv)
    return ir.Call(b.call.fn, (keys, values)), bt.TREE


def _make_namedtuple(b):
    """Cls(a, b) of a NamedTuple class: typed as the tuple of its items."""
    cls, items = b.call.args
    t = b.ctx.type_of(items)
    if isinstance(t, bt.Tuple) or not bt.is_batched(t):
        return b.call, t
    return b.call, bt.TREE


def _make_object(b):
    """Cls(a, b) of a pytree class: with any argument batched, every leaf batched."""
    cls, items = b.call.args[:2]
    t = b.ctx.type_of(items)
    if not bt.is_batched(t):
        return b.call, bt.U
    items = b.to_batched(items, t)
    return ir.Call(b.call.fn, (cls, items) + tuple(b.call.args[2:])), bt.TREE


def _merge_dicts(b):
    """{**a, **b}: with both dict types known, the merged dict type; else every leaf of the
    result batched."""
    first, second = b.call.args
    tf, ts = b.ctx.type_of(first), b.ctx.type_of(second)
    if isinstance(tf, bt.Dict) and isinstance(ts, bt.Dict):
        merged = dict(zip(tf.keys, tf.types))
        merged.update(zip(ts.keys, ts.types))
        return b.call, bt.dct(tuple(merged), tuple(merged.values()))
    if not bt.is_batched(tf) and not bt.is_batched(ts):
        return b.call, bt.U
    first, second = b.to_batched(first, tf), b.to_batched(second, ts)
    return ir.Call(b.call.fn, (first, second)), bt.TREE


def _set_item(b):
    """d[k] = v on a dict of known keys: the dict type with k's type that of v; otherwise
    (a list, keys not known) every leaf of the result batched."""
    container, key, value = b.call.args
    tc, tv = b.ctx.type_of(container), b.ctx.type_of(value)
    try:
        k = b.static_atom(key)
    except NotStatic:
        return loop(b, "any")
    if isinstance(tc, bt.Dict):
        keys, types = list(tc.keys), list(tc.types)
        if k in keys:
            types[keys.index(k)] = tv
        else:
            keys.append(k)
            types.append(tv)
        return b.call, bt.dct(keys, types)
    container = b.to_batched(container, tc)
    value = b.to_batched(value, tv)
    return ir.Call(b.call.fn, (container, key, value)), bt.TREE


def _leaves_of(b):
    """tree_leaves of a batched tree: its leaves, each batched."""
    tree = b.call.args[0]
    tree = b.to_batched(tree, b.ctx.type_of(tree))
    return ir.Call(b.call.fn, (tree,) + tuple(b.call.args[1:]), b.call.kwargs), bt.seq(bt.B)


def _flatten_of(b):
    """tree_flatten of a tree: its leaves, each batched (the batched tree's), and the
    structure, which no example changes."""
    tree = b.call.args[0]
    t = b.ctx.type_of(tree)
    if not bt.is_batched(t):
        return b.call, bt.U
    tree = b.to_batched(tree, t)
    return (ir.Call(b.call.fn, (tree,) + tuple(b.call.args[1:]), b.call.kwargs),
            bt.tup((bt.seq(bt.B), bt.U)))


def _unflatten_of(b):
    """tree_unflatten(treedef, leaves): with any leaf batched, every leaf batched."""
    treedef, leaves = b.call.args
    t = b.ctx.type_of(leaves)
    if not bt.is_batched(t):
        return b.call, bt.U
    leaves = b.to_batched(leaves, t)
    return ir.Call(b.call.fn, (treedef, leaves)), bt.TREE


def _tree_of_leaves(b):
    """unflatten_like(leaves, like): a tree whose leaves are all batched."""
    leaves, like = b.call.args
    leaves = b.to_batched(leaves, b.ctx.type_of(leaves))
    return ir.Call(b.call.fn, (leaves, like)), bt.TREE


def _check(b):
    """assert of a batched condition: it must hold for every example."""
    cond = b.emit(ir.Call(jnp_ref("all"), (b.call.args[0],)))
    return ir.Call(b.call.fn, (cond,) + b.call.args[1:]), bt.U


def _sequence(b):
    """tuple(x) / list(x): a batched array's per-example rows, or the container itself."""
    (x,) = b.call.args
    t = b.ctx.type_of(x)
    if isinstance(t, bt.Tree):  # an array or a tuple of batched leaves: known when it runs
        as_list = ir.Const(b.call.fn.value is list)
        return ir.Call(vm_ref("tree_rows"), (x, as_list)), bt.seq(bt.TREE)
    if bt.is_array(t):
        rows = b.emit(ir.Call(jnp_ref("moveaxis"), (x, ir.Const(1), ir.Const(0))))
        return ir.Call(b.call.fn, (rows,)), bt.seq(bt.B)
    return b.call, t if bt.is_sequence(t) else bt.seq(bt.element(t))


def _rows(b, a: ir.Atom) -> tuple[ir.Atom, bt.BType]:
    """What zip iterates in `a`: a batched array's per-example rows; a Tree's rows or items,
    as it shows when it runs (vm.tree_rows); a container's items."""
    t = b.ctx.type_of(a)
    if isinstance(t, bt.Tree):
        return b.emit(ir.Call(vm_ref("tree_rows"), (a, ir.Const(False)))), bt.TREE
    if bt.is_array(t):
        return b.emit(ir.Call(jnp_ref("moveaxis"), (a, ir.Const(1), ir.Const(0)))), bt.B
    return a, bt.element(t)


def _zip(b):
    rows = [_rows(b, a) for a in b.call.args]
    return (ir.Call(b.call.fn, tuple(r for r, _ in rows)),
            bt.seq(bt.tup(t for _, t in rows)))


def _enumerate(b):
    x, t = _rows(b, b.call.args[0])
    return ir.Call(b.call.fn, (x,) + b.call.args[1:]), bt.seq(bt.tup((bt.U, t)))


def _builtin_sum(b):
    """sum(xs): over a container, Python's own; over a batched array, its per-example rows."""
    t = b.ctx.type_of(b.call.args[0])
    if t is bt.B and len(b.call.args) == 1:
        return ir.Call(jnp_ref("sum"), (b.call.args[0],), (("axis", ir.Const(1)),)), bt.B
    # a tree of unknown structure may be a list of batched arrays (a dict's values whose
    # keys a loop made): summed example by example, never over its leaves' batch axis
    return loop(b) if bt.is_array(t) else (b.call, bt.batchify(bt.element(t)))


def _decide_try(b):
    """A `try` decided on the values it reads: the same for every example, so it may read
    no batched value (its shape and contents would be the batch's, not an example's)."""
    decider = b.call.args[0].value if isinstance(b.call.args[0], ir.Ref) else None
    where = f"{decider.filename}:{decider.line}: " if hasattr(decider, "line") else ""
    args = [b.call.args[0]]
    for a, name in zip(b.call.args[1:], getattr(decider, "names", ())):
        t = b.ctx.type_of(a)
        if t is bt.B:  # an array: decided on the first example's (its shape is every one's)
            a = b.emit(ir.Call(ir.Ref(operator.getitem, "[]"), (a, ir.Const(0))), typ=bt.U)
        elif bt.is_batched(t):
            raise TransformError(f"{where}vmap: this `try` reads `{name}`, which holds batched "
                                 "values; a try is decided once for all examples, so move what "
                                 "reads it out of the try (check shapes with `if` or `assert`)")
        args.append(a)
    return ir.Call(b.call.fn, tuple(args)), bt.U


def _ordering(fn, loop_returns: str):
    """The rule of sorted / max / min of one container. A dict's keys never differ between
    examples: called as written. Items that hold arrays inside tuples or lists ((key, value)
    pairs, (name, array) tuples) are ordered once for all examples by what is the same in
    every example, `sorted(items, key=vm.static_key)` (max: the first of them in reverse,
    min: the first), and stay Python values; items that are batched arrays themselves, and
    a `key` function of the user's, are ordered per example (a loop over the examples)."""
    static_key = vm_ref("static_key")

    def rule(b):
        call = b.call
        types = [b.ctx.type_of(a) for a in call.args]
        if not any(bt.is_batched(t) for t in types) and not any(
                bt.is_batched(b.ctx.type_of(a)) for _, a in call.kwargs):
            return unbatched_result(b)
        kwargs = dict(call.kwargs)
        allowed = ("key", "reverse") if fn is sorted else ()
        if (len(call.args) != 1 or call.star_args is not None
                or any(k not in allowed or bt.is_batched(b.ctx.type_of(a))
                       for k, a in call.kwargs)):
            return loop(b, loop_returns)
        container, t = call.args[0], types[0]
        if isinstance(t, bt.Dict):
            return unbatched_result(b)  # iterating a dict gives its keys
        if isinstance(t, bt.Tuple):
            items = t.items
        elif isinstance(t, bt.Seq):
            items = (t.item,)
        else:
            return loop(b, loop_returns)
        if any(bt.is_array(i) for i in items):
            return loop(b, loop_returns)
        elem = bt.element(t)
        key = kwargs.get("key", static_key)
        if key != static_key:
            key = _key_of_examples(b, key, elem)  # the user's key, where it is static
            if key is None:
                return loop(b, loop_returns)
        uniform = bt.tup((elem,) * len(items)) if isinstance(t, bt.Tuple) else bt.seq(elem)
        container = b.ctx.convert(container, t, uniform, b.out, b.origin)
        kwargs["key"] = key
        if fn is max:
            kwargs["reverse"] = ir.Const(True)
        ordered = ir.Call(ir.Ref(sorted, "sorted"), (container,), tuple(kwargs.items()))
        if fn is sorted:
            return ordered, uniform
        return ir.Call(GETITEM, (b.emit(ordered, "ordered", uniform), ir.Const(0))), elem
    return rule


def _key_of_examples(b, key: ir.Atom, elem: bt.BType) -> ir.Atom | None:
    """A sort key function of the user's (`key=lambda kv: kv[0]`) whose value is the same
    in every example for items of type `elem`: its batched version as a key of one item
    (vm.ExampleKey), so one sort orders every example. None where the key differs between
    examples, or is not known here."""
    from redraft.compiler.transforms.batch.infer import batch_core_of, callee_result_type
    from redraft.compiler.transforms.calls import callees
    if not isinstance(key, ir.Ref) or not callable(key.value):
        return None
    try:
        core = batch_core_of(key.value)
        if len(core.params) != 1 or bt.is_batched(callee_result_type(key.value, core,
                                                                     (elem,))):
            return None
        batched = callees.vmap_of(key.value, (elem,))
    except Exception:  # noqa: BLE001 (no Core, or not batchable: ordered per example)
        return None
    return b.emit(ir.Call(vm_ref("ExampleKey"), (ir.Ref(batched, f"{key.path}_batched"),
                                                ir.Var(b.ctx.size))), "key")


def _dict(b):
    """dict(d) keeps d's type; dict(pairs) of (key, value) pairs whose keys are the same in
    every example (unbatched) is a dict of those keys, every value batched (the keys are
    known only when it runs); anything else is made once per example."""
    call = b.call
    if not any(bt.is_batched(b.ctx.type_of(a)) for a in call.args + tuple(
            a for _, a in call.kwargs)):
        return unbatched_result(b)
    if len(call.args) != 1 or call.kwargs or call.star_args is not None:
        return loop(b, "any")
    pairs, t = call.args[0], b.ctx.type_of(call.args[0])
    if isinstance(t, bt.Dict):
        return call, t
    items = t.items if isinstance(t, bt.Tuple) else (t.item,) if isinstance(t, bt.Seq) else ()
    if not items or not all(isinstance(i, bt.Tuple) and len(i.items) == 2
                            and not bt.is_batched(i.items[0]) for i in items):
        return loop(b, "any")
    pair = bt.tup((bt.U, bt.TREE))
    uniform = bt.tup((pair,) * len(items)) if isinstance(t, bt.Tuple) else bt.seq(pair)
    return ir.Call(call.fn, (b.ctx.convert(pairs, t, uniform, b.out, b.origin),)), bt.TREE


def _getattr(b):
    t = b.ctx.type_of(b.call.args[0])
    return b.call, bt.TREE if bt.is_batched(t) else bt.U


defbatch(helpers.append, _append)
defbatch(helpers.concat, _concat)
defbatch(helpers.values_of, _values_of)
defbatch(helpers.items_of, _items_of)
defbatch(helpers.keys_of, lambda b: (b.call, bt.U))
defbatch(helpers.iterated, _iterated(kind=0, value=0))
defbatch(ad.iterated_tangent, _iterated(kind=0, value=1))
defbatch(ad.iterated_bar, _iterated(kind=1, value=0))
defbatch(helpers.make_dict, _make_dict)
defbatch(helpers.set_item, _set_item)
defbatch(helpers.merge_dicts, _merge_dicts)
defbatch(helpers.zip_spread, lambda b: (
    (b.call, bt.U) if not bt.is_batched(b.ctx.type_of(b.call.args[0])) else
    (ir.Call(b.call.fn, (b.to_batched(b.call.args[0], b.ctx.type_of(b.call.args[0])),)),
     bt.TREE)))
defbatch(helpers.make_namedtuple, _make_namedtuple)
defbatch(helpers.make_object, _make_object)
defbatch(pytree.tree_leaves, lambda b: _leaves_of(b))
defbatch(ad.unflatten_like, lambda b: _tree_of_leaves(b))
defbatch(pytree.tree_flatten_with_path, lambda b: loop(b, "any"))
defbatch(pytree.tree_flatten, _flatten_of)
defbatch(pytree.tree_unflatten, _unflatten_of)
# read from its source, as before it had a (refusing) derivative rule (calls/value_calls.py)
defbatch_source(local_functions.closure)
defbatch(ad.paths_bar_to_tree, lambda b: loop(b, "any"))
defbatch(helpers.check, _check)
defbatch(helpers.decide_try, _decide_try)
defbatch(helpers.raise_, unbatched_result)
for _op in (Exception, ValueError, TypeError, KeyError, IndexError, AssertionError,
            RuntimeError, NotImplementedError, AttributeError, ZeroDivisionError):
    defbatch(_op, unbatched_result)  # an exception made (raised only where a check fails)
for _op in (str, repr, pytree.keystr):
    defbatch(_op, lambda b: loop(b, "any") if any(
        bt.is_batched(b.ctx.type_of(a)) for a in b.call.args) else unbatched_result(b))
defbatch(print, unbatched_result)
defbatch(isinstance, unbatched_result)
defbatch(type, unbatched_result)
defbatch(tuple, _sequence)
defbatch(list, _sequence)
defbatch(zip, _zip)
defbatch(enumerate, _enumerate)
defbatch(sum, _builtin_sum)
defbatch(sorted, _ordering(sorted, "any"))
defbatch(getattr, _getattr)
defbatch(dict, _dict)
defbatch(abs, elementwise())
defbatch(pow, elementwise())
defbatch(builtins.round, elementwise(static=(1,)))
defbatch(divmod, elementwise(result=bt.tup((bt.B, bt.B))))
for _fn in (max, min):
    defbatch(_fn, _ordering(_fn, "array"))

_CONCRETE = ("the value differs from example to example, so no single Python value exists "
             "(JAX: ConcretizationTypeError); keep it an array, or use jnp.where / lax.cond")
for _fn in (int, float, bool, complex, hash):
    defnotbatchable(_fn, f"`{_fn.__name__}()` of a batched value: {_CONCRETE}")
defnotbatchable(range, "a loop whose number of iterations depends on a batched value: "
                       "use a while loop on a batched condition")
defnotbatchable(slice, "a slice whose bounds depend on a batched value has a per-example "
                       "shape; use lax.dynamic_slice")
del jnp
