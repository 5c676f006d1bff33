"""Structured control flow: fori_loop, while_loop, scan, map, cond and switch.

These are eager Python implementations, not yet Primitives in the registry: a later issue
decides their Core form (and gives them derivatives, batching and compilation). They keep
JAX's contracts so that code written against them keeps working when they are staged:

- carries and branch results are pytrees of arrays; every leaf is made an Array;
- a loop's carry keeps its pytree structure, shapes and dtypes from one iteration to the
  next (a weakly typed initial leaf, such as a Python scalar, is widened once to the dtype
  the body returns, as JAX does); the error names the leaf that changed;
- every function given to a construct runs at least once, as JAX traces each one: a loop
  that runs zero times still evaluates its body once to learn its types (and discards the
  result), and cond/switch evaluate every branch so that branches that disagree fail here
  as they will when compiled; only the selected branch's result is returned.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np

from redraft.compiler.core.abstract import ShapedArray
from redraft.runtime import dtypes
from redraft.runtime.array import Array, wrap_host
from redraft.runtime.convert import as_array
from redraft.runtime.pytree import PyTreeDef, tree_flatten, tree_map, tree_unflatten

# ---- pytrees of arrays, and how to name their leaves -----------------------------------------


def _as_array_tree(tree):
    """`tree` with every leaf an Array (Python scalars stay weakly typed)."""
    return tree_map(as_array, tree)


def _leaf_paths(treedef: PyTreeDef, prefix: str = "") -> list[str]:
    """Paths such as `[0]['w'].bias` for each leaf, in flattening order."""
    if treedef.kind is None:
        return [prefix]
    return [path for key, child in zip(_child_keys(treedef), treedef.children)
            for path in _leaf_paths(child, prefix + key)]


def _child_keys(treedef: PyTreeDef) -> list[str]:
    """How each child of a node is reached: `['key']`, `.field` or `[i]`."""
    if treedef.kind is dict:
        return [f"[{k!r}]" for k in treedef.aux]
    if hasattr(treedef.kind, "_fields") and treedef.kind is not tuple:
        return [f".{name}" for name in treedef.kind._fields]
    return [f"[{i}]" for i in range(len(treedef.children))]


def _type_str(x: Array) -> str:
    return ShapedArray(x.shape, x.dtype).str_short()


def _mismatch(a: Array, b: Array) -> str:
    """', so the shapes do not match' and the like; empty when the types agree."""
    what = [w for w, differs in (("shapes", a.shape != b.shape), ("dtypes", a.dtype != b.dtype))
            if differs]
    return f", so the {' and '.join(what)} do not match" if what else ""


def _describe_node(treedef: PyTreeDef) -> str:
    if treedef.kind is None:
        return "a leaf"
    if treedef.kind is type(None):
        return "None"
    if treedef.kind in (tuple, list):
        return f"a {treedef.kind.__name__} of length {len(treedef.children)}"
    if treedef.kind is dict:
        return f"a dict with keys {list(treedef.aux)}"
    return f"a {treedef.kind.__name__} node"


def _first_difference(a: PyTreeDef, b: PyTreeDef, path: str = "") -> tuple[str, str, str]:
    """(path, a's node there, b's node there) at the first place two structures differ."""
    if a.kind != b.kind or a.aux != b.aux or len(a.children) != len(b.children):
        return path, _describe_node(a), _describe_node(b)
    for key, child_a, child_b in zip(_child_keys(a), a.children, b.children):
        if child_a != child_b:
            return _first_difference(child_a, child_b, path + key)
    return path, _describe_node(a), _describe_node(b)


def _param_name(fn: Callable, position: int, fallback: str) -> str:
    """The name of `fn`'s parameter at `position`, for error messages."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return fallback
    return names[position] if position < len(names) else fallback


# ---- the carry of a loop --------------------------------------------------------------------

def _check_carry(name: str, carry_name: str, before, after) -> None:
    """Raise JAX's TypeError if `after` differs from `before` in structure, shape or dtype."""
    leaves_in, tree_in = tree_flatten(before)
    leaves_out, tree_out = tree_flatten(after)
    if tree_in != tree_out:
        path, was, now = _first_difference(tree_in, tree_out)
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nthe input carry {carry_name}{path} is {was} but "
            f"the corresponding component of the carry output is {now}.\n\nRevise the "
            "function so that the carry output has the same pytree structure as the carry "
            "input.")
    diffs = [f"the input carry component {carry_name}{path} has type {_type_str(a)} but the "
             f"corresponding output carry component has type {_type_str(b)}{_mismatch(a, b)}"
             for path, a, b in zip(_leaf_paths(tree_in), leaves_in, leaves_out)
             if _mismatch(a, b)]
    if diffs:
        raise TypeError(f"{name} function carry input and carry output must have equal "
                        f"types, but they differ:\n\n{_listing(diffs)}\n\nRevise the function "
                        "so that all output types match the corresponding input types.")


def _listing(sentences: list[str]) -> str:
    """One capitalised sentence, or a bulleted list, as JAX words its type errors."""
    if len(sentences) == 1:
        return sentences[0][0].upper() + sentences[0][1:] + "."
    return "\n".join(f"  * {s}{';' if k < len(sentences) - 1 else '.'}"
                     for k, s in enumerate(sentences))


def _widen_weak(before, after):
    """`before` with weakly typed leaves widened to the dtype of the matching leaf of `after`
    (JAX's rule for Python-scalar initial carries), or None if nothing needs widening."""
    leaves_in, tree_in = tree_flatten(before)
    leaves_out, tree_out = tree_flatten(after)
    if tree_in != tree_out:
        return None
    widened, changed = [], False
    for a, b in zip(leaves_in, leaves_out):
        if a._weak and a.shape == b.shape and a.dtype != b.dtype:
            dtype, _ = dtypes.promote_types((a.dtype, True), (b.dtype, b._weak))
            if dtype == b.dtype:
                a, changed = wrap_host(a._buf.astype(dtype), False), True
        widened.append(a)
    return tree_unflatten(tree_in, widened) if changed else None


def _first_step(name: str, carry_name: str, body: Callable, carry, *args):
    """Run `body(carry, *args) -> (new_carry, extra)` once, widening weak initial leaves and
    running again if needed; returns (carry actually used, new_carry, extra)."""
    new_carry, extra = body(carry, *args)
    widened = _widen_weak(carry, new_carry)
    if widened is not None:
        carry = widened
        new_carry, extra = body(carry, *args)
    _check_carry(name, carry_name, carry, new_carry)
    return carry, new_carry, extra


# ---- while_loop and fori_loop -----------------------------------------------------------------

def _predicate(value) -> bool:
    """The value of while_loop's cond_fun, which must be a boolean scalar."""
    _, treedef = tree_flatten(value)
    if treedef.kind is not None:
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {treedef}.")
    pred = as_array(value)
    if pred.shape != () or pred.dtype != dtypes.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type "
                        f"{_type_str(pred)}.")
    return bool(pred)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """lax.while_loop: `val = body_fun(val)` while `cond_fun(val)`; returns the last val."""
    if not (callable(cond_fun) and callable(body_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    carry_name = _param_name(body_fun, 0, "val")
    val = _as_array_tree(init_val)
    go = _predicate(cond_fun(val))
    body = _carry_only(body_fun)
    # the body runs once even if the loop does not, as JAX traces it: for its types
    val, new_val, _ = _first_step("while_loop body", carry_name, body, val)
    while go:
        val = new_val
        go = _predicate(cond_fun(val))
        if go:
            new_val, _ = body(val)
            _check_carry("while_loop body", carry_name, val, new_val)
    return val


def _carry_only(body_fun: Callable) -> Callable:
    """`body_fun(*args, carry)` as a step `(carry, *args) -> (new carry, None)`."""
    def body(carry, *args):
        return _as_array_tree(body_fun(*args, carry)), None
    return body


def _loop_bounds(lower, upper) -> tuple[int, int, np.dtype, bool]:
    """(lower, upper, index dtype, index weak) for fori_loop's integer bounds."""
    lo, hi = as_array(lower), as_array(upper)
    for bound in (lo, hi):
        if bound.shape != () or bound.dtype.kind not in "iu":
            raise TypeError("lax.fori_loop: lower and upper must be integer scalars, got "
                            f"{_type_str(lo)} and {_type_str(hi)}")
    if lo.dtype == hi.dtype or hi._weak:
        dtype = lo.dtype
    elif lo._weak:
        dtype = hi.dtype
    else:
        raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                        f"{lo.dtype.name} and {hi.dtype.name}")
    return int(lo), int(hi), dtype, lo._weak and hi._weak


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll=None):
    """lax.fori_loop: `val = body_fun(i, val)` for i in range(lower, upper)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lo, hi, dtype, weak = _loop_bounds(lower, upper)
    _check_unroll(unroll, allow_none=True)
    carry_name = _param_name(body_fun, 1, "val")
    body = _carry_only(body_fun)

    def index(i: int) -> Array:
        return wrap_host(np.asarray(i, dtype), weak)

    val, new_val, _ = _first_step("fori_loop body", carry_name, body, _as_array_tree(init_val),
                                  index(lo))
    if hi <= lo:
        return val
    for i in range(lo + 1, hi):
        val = new_val
        new_val, _ = body(val, index(i))
        _check_carry("fori_loop body", carry_name, val, new_val)
    return new_val


def _check_unroll(unroll, allow_none: bool = False) -> None:
    if (unroll is None and allow_none) or isinstance(unroll, bool):
        return
    if not isinstance(unroll, (int, np.integer)) or unroll < 0:
        raise ValueError(f"`unroll` must be a `bool` or a non-negative `int`, got {unroll!r}.")


# ---- scan and map ---------------------------------------------------------------------------

def _scan_length(xs_leaves: list[Array], length) -> int:
    for x in xs_leaves:
        if x.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {x}.")
    sizes = [x.shape[0] for x in xs_leaves]
    if length is not None:
        length = int(length)
        if any(s != length for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sizes}.")
        return length
    if not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(sizes)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(s) for s in sizes)}.")
    return sizes[0]


def _scan_body(f: Callable) -> Callable:
    """f(carry, x) -> (carry, y), with the pair checked and every leaf made an Array."""
    def body(carry, x):
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair, got {out!r}.")
        return _as_array_tree(out[0]), _as_array_tree(out[1])
    return body


class _Stacker:
    """Collects the per-iteration outputs `y` of a scan and stacks them on a new axis 0."""

    def __init__(self):
        self.treedef, self.paths, self.first, self.rows = None, [], [], []

    def add(self, y, iteration: int) -> None:
        leaves, treedef = tree_flatten(y)
        if self.treedef is None:
            self.treedef, self.paths, self.first = treedef, _leaf_paths(treedef), leaves
        elif treedef != self.treedef:
            raise TypeError(f"scan body output y changed its pytree structure at iteration "
                            f"{iteration}: it was {self.treedef}, now {treedef}.")
        else:
            for path, a, b in zip(self.paths, self.first, leaves):
                if _mismatch(a, b):
                    raise TypeError(f"scan body output y{path} changed type at iteration "
                                    f"{iteration}: it was {_type_str(a)}, now {_type_str(b)}"
                                    f"{_mismatch(a, b)}.")
        self.rows.append(leaves)

    def stacked(self, keep_rows: bool = True):
        columns = zip(*self.rows) if keep_rows else ([] for _ in self.first)
        leaves = [self._stack(column, first) for column, first in zip(columns, self.first)]
        return tree_unflatten(self.treedef, leaves)

    @staticmethod
    def _stack(column, first: Array) -> Array:
        if not column:
            return wrap_host(np.zeros((0,) + first.shape, first.dtype), first._weak)
        weak = all(a._weak for a in column)
        return wrap_host(np.stack([a._buf for a in column]), weak)


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1):
    """lax.scan: `carry, y = f(carry, x)` over the leading axis of `xs`; returns the final
    carry and the ys stacked on a new leading axis (ys[i] comes from xs[i], also when
    `reverse` runs the loop from the end)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    _check_unroll(unroll)
    carry_name = _param_name(f, 0, "carry")
    xs_leaves, xs_tree = tree_flatten(xs)
    xs_leaves = [as_array(x) for x in xs_leaves]
    n = _scan_length(xs_leaves, length)
    order = list(range(n))[::-1] if reverse else list(range(n))

    def x_at(i):
        return tree_unflatten(xs_tree, [wrap_host(_row(x, i), x._weak) for x in xs_leaves])

    body, stack = _scan_body(f), _Stacker()
    first_x = x_at(order[0]) if n else _zero_slice(xs_tree, xs_leaves)
    carry, new_carry, y = _first_step("scan body", carry_name, body, _as_array_tree(init),
                                      first_x)
    stack.add(y, 0)
    if n == 0:
        return carry, stack.stacked(keep_rows=False)
    for step, i in enumerate(order[1:], start=1):
        carry = new_carry
        new_carry, y = body(carry, x_at(i))
        _check_carry("scan body", carry_name, carry, new_carry)
        stack.add(y, step)
    if reverse:
        stack.rows.reverse()
    return new_carry, stack.stacked()


def _row(x: Array, i: int) -> np.ndarray:
    row = x._buf[i]
    return row if type(row) is np.ndarray else np.asarray(row)


def _zero_slice(xs_tree: PyTreeDef, xs_leaves: list[Array]):
    """An `x` of the right types for a zero-length scan, to learn the body's output types."""
    return tree_unflatten(xs_tree, [wrap_host(np.zeros(x.shape[1:], x.dtype), x._weak)
                                    for x in xs_leaves])


def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001 - lax's name
    """lax.map: apply `f` to each slice of `xs` along its leading axis and stack the results.

    `batch_size` is accepted (JAX uses it to vectorise chunks); the results are the same.
    """
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 0):
        raise ValueError(f"lax.map: batch_size must be a non-negative int, got {batch_size!r}")
    _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
    return ys


# ---- cond and switch -------------------------------------------------------------------------

def _scalar_selector(value, what: str) -> Array:
    """`value` as a scalar Array, refusing sequences and non-scalars as JAX does."""
    if value is None:
        raise TypeError(f"{what} is None")
    if isinstance(value, Sequence):
        raise TypeError(f"{what} must be a scalar, got {value!r} of type {type(value)}")
    array = as_array(value)
    if array.shape != ():
        raise TypeError(f"{what} must be a scalar, got {value} of shape {array.shape}.")
    return array


def _check_branch_outputs(api: str, names: list[str], outs: list) -> None:
    """All branches must return the same structure, shapes and dtypes (weak types may differ)."""
    (leaves0, tree0), name0 = tree_flatten(outs[0]), names[0]
    for name, out in zip(names[1:], outs[1:]):
        leaves, tree = tree_flatten(out)
        if tree != tree0:
            path, a, b = _first_difference(tree0, tree)
            raise TypeError(f"{api} branch outputs must have the same pytree structure, but "
                            f"they differ:\n\n{name0} output{path} is {a} but {name} "
                            f"output{path} is {b}.\n\nRevise {name0} and/or {name} so that "
                            "they have the same pytree structure.")
        for path, a, b in zip(_leaf_paths(tree0), leaves0, leaves):
            if _mismatch(a, b):
                raise TypeError(f"{api} branches must have equal output types but they "
                                f"differ.\n\nThe output of {name0}{path} has type "
                                f"{_type_str(a)} but the corresponding output of {name} has "
                                f"type {_type_str(b)}{_mismatch(a, b)}.\n\nRevise {name0} "
                                f"and/or {name} so that all output types match.")


def _run_branches(api: str, names: list[str], branches: Sequence[Callable], chosen: int,
                  operands: tuple):
    """Evaluate every branch (JAX traces each), check they agree, return the chosen one's
    result; a leaf is weakly typed only if it is in every branch."""
    operands = _as_array_tree(operands)
    outs = [_as_array_tree(branch(*operands)) for branch in branches]
    _check_branch_outputs(api, names, outs)
    per_branch = [tree_flatten(out)[0] for out in outs]
    leaves, treedef = tree_flatten(outs[chosen])
    joined = [wrap_host(leaf._buf, all(branch_leaves[i]._weak for branch_leaves in per_branch))
              for i, leaf in enumerate(leaves)]
    return tree_unflatten(treedef, joined)


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """lax.cond: `true_fun(*operands)` if `pred` else `false_fun(*operands)`."""
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    pred = _scalar_selector(pred, "Pred")
    if pred.dtype.kind not in "biuf":
        raise TypeError(f"Pred type must be either boolean or number, got {pred.dtype.name}.")
    chosen = 0 if bool(pred._buf != 0) else 1
    return _run_branches("cond", ["true_fun", "false_fun"], [true_fun, false_fun], chosen,
                         operands)


def switch(index, branches: Sequence[Callable], *operands):
    """lax.switch: `branches[index](*operands)`, with `index` clamped into range."""
    branches = tuple(branches)
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    index = _scalar_selector(index, "Branch index")
    if index.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index.dtype.name}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    chosen = int(np.clip(int(index), 0, len(branches) - 1))
    names = ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))]
    return _run_branches("switch", names, branches, chosen, operands)



# ---- platform_dependent -----------------------------------------------------------------------

def platform_branch(default: Callable | None, per_platform: dict) -> Callable:
    """The branch of lax.platform_dependent for the platform redraft compiles for (the
    CPU: redraft.default_backend() is "cpu"), else `default`."""
    from redraft.runtime.devices import default_backend
    platform = default_backend()
    branch = per_platform.get(platform, default)
    if branch is None:
        raise NotImplementedError(f"lax.platform_dependent: no branch for platform "
                                  f"{platform!r} and no default (branches for "
                                  f"{sorted(per_platform)})")
    return branch


def platform_dependent(*args, default: Callable | None = None, **per_platform: Callable):
    """`per_platform[platform](*args)` for the platform redraft compiles for, or
    `default(*args)`: the other branches are never called (inside a transformed function
    the frontend calls the chosen branch directly)."""
    return platform_branch(default, per_platform)(*args)


def _mark_lowered() -> None:
    """platform_dependent reaches vmap only when the frontend could not see its call (see
    compiler/transforms/batch/rules/control.py for the loops and branches)."""
    from redraft.compiler.primitives.registry import defnotbatchable
    defnotbatchable(platform_dependent, "the frontend lowers lax.platform_dependent to a call "
                    "of the chosen branch, which vmap batches; a call that reaches vmap passed "
                    "functions the frontend could not see (pass them directly in the call)")


_mark_lowered()
