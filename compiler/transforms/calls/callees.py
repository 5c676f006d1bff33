"""Transformed versions of called functions, made on first call and cached.

Generated code calls `g_jvp(...)` or `g_bwd(...)` for the user's other functions; each is a
proxy that transforms `g` the first time it runs (so a function may call itself), then
behaves as the loaded, generated function.

The transforms themselves call this module (a callee of a function being transformed is
transformed too), so it does not import them: each fills its slot here when it is imported
(`install_transformer`), the way compiler/frontend/specialise.py gets the frontend's lowering.
"""
from __future__ import annotations

from typing import Callable

from redraft.compiler.core.core_function import CoreFunction
from redraft.compiler.transforms.cache import TRANSFORM_CACHE, code_state
from redraft.compiler.transforms.batch import batch_types as bt

# kind -> transformer: 'jvp' (fn, mask), 'vjp' (fn, mask, mode, has_aux, single) and 'vmap'
# (fn, in_types), each returning (fn's Core, the transformed Core).
_TRANSFORMERS: dict[str, Callable] = {}


def install_transformer(kind: str, transformer: Callable) -> None:
    """Fill the slot of transform `kind`: compiler/transforms/ad/jvp.py, ad/vjp.py and
    batch/vmap_calls.py call this when they are imported."""
    _TRANSFORMERS[kind] = transformer


def _transformer(kind: str) -> Callable:
    found = _TRANSFORMERS.get(kind)
    if found is None:
        raise RuntimeError(f"no {kind} transform installed: import redraft (its public API "
                           f"imports the transforms, which fill compiler/transforms/calls/"
                           f"callees.py's slots)")
    return found


class Transformed:
    """A lazily transformed function: `make()` builds and loads it on first use."""

    def __init__(self, key: tuple, make: Callable[[], Callable], name: str):
        self.key = key
        self.make = make
        self.__name__ = name
        self._fn: Callable | None = None

    @property
    def fn(self) -> Callable:
        if self._fn is None:
            self._fn = self.make()
        return self._fn

    def __call__(self, *args):
        return self.for_arguments(args).fn(*args)

    def for_arguments(self, args: tuple) -> "Transformed":
        """This transform of the function traced for these arguments' structure where the
        function is traced (compiler/tracing/specialise.py; the callee's arguments begin
        with the function's), else itself."""
        remake = getattr(self, "_remake", None)
        if remake is None:
            return self
        from redraft.compiler.frontend.specialise import specialise_deep
        fn, again = remake
        target = specialise_deep(fn, tuple(args[:len(_parameters(fn))]))
        return self if target is fn else again(target)

    def __redraft_transformable__(self):
        return self.fn.__redraft_transformable__()

    def __repr__(self) -> str:
        return f"<redraft transformed {self.__name__}>"


class LoadedOnCall(Transformed):
    """A Transformed whose Core is made on first use and printed and loaded as Python only
    when it is called (or its function asked for): staging and further transforms read its
    Core alone, and compiling the source of each function a jit call transforms cost a
    first call ~0.5 ms apiece. `build()` gives (the Core, the generated file's header)."""

    def __init__(self, key: tuple, build: Callable[[], tuple], name: str):
        super().__init__(key, self._load, name)
        self._build = build
        self._made: tuple | None = None

    def _core_and_header(self) -> tuple:
        if self._made is None:
            self._made = self._build()
        return self._made

    def _load(self) -> Callable:
        from redraft.compiler.core.loader import load
        core, header = self._core_and_header()
        return load(core, header=header)

    def __redraft_transformable__(self):
        return self._core_and_header()[0]  # the Core the loaded function is printed from


def _cached(kind: str, fn, mask: tuple, extra: tuple, build: Callable[[], tuple]):
    """The one Transformed of `fn` for this kind, mask and extra (the transform cache keeps
    it as long as `fn`, and reads `fn` again when its code or closure contents change);
    `build()` gives its Core and header (LoadedOnCall)."""
    name = f"{getattr(fn, '__name__', 'f')}_{kind}"
    key = (kind, code_state(fn), mask, extra)
    return TRANSFORM_CACHE.get(fn, key, lambda: LoadedOnCall(key, build, name))


def _per_structure(made: Transformed, fn, again: Callable) -> Transformed:
    """`made`, which specialises on its arguments' structure when called where `fn` is a
    function traced per structure or a transform of one (its Core depends on it):
    `again(g)` makes the same transform of g, fn specialised on one structure."""
    from redraft.compiler.tracing.readable import traced_within
    if traced_within(fn):
        made._remake = (fn, again)
    return made


def _parameters(fn) -> tuple:
    import inspect
    return tuple(inspect.signature(fn).parameters)


def jvp_of(fn, mask: tuple[bool, ...]) -> Transformed:
    """`fn`'s forward-mode derivative in the arguments flagged by `mask`."""
    from redraft.compiler.transforms.calls import custom
    if isinstance(fn, custom.custom_vjp) and fn.jvp_rule is None:
        from redraft.compiler.transforms.common import TransformError
        raise TransformError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp "
                             f"function ({fn.__name__}); give it a custom_jvp rule instead")

    def build():
        if isinstance(fn, (custom.custom_jvp, custom.custom_vjp)):
            core = custom.custom_jvp_core(fn, mask)
            return core, _header(core, "custom forward rule (jvp)")
        core, made = _transformer("jvp")(fn, mask)
        return made, _header(core, "forward mode (jvp)")
    return _per_structure(_cached("jvp", fn, mask, (), build), fn, lambda g: jvp_of(g, mask))


def vjp_of(fn, mask: tuple[bool, ...], mode: str, has_aux: bool = False,
           single: bool | None = None) -> Transformed:
    """`fn`'s reverse-mode derivative: mode 'vjp' (params, out_bar) -> (out, bars),
    'bwd' (params, out_bar) -> bars, 'grad' (params) -> bars of a scalar output,
    'value_and_grad' (params) -> (out, bars) of a scalar output, in one forward pass."""
    def build():
        if mode == "bwd" and not has_aux and _is_custom(fn):
            core = _custom_bwd(fn, mask, single if single is not None else sum(mask) == 1)
            return core, _header(core, "custom reverse rule")
        core, made = _transformer("vjp")(fn, mask, mode, has_aux, single)
        return made, _header(core, f"reverse mode ({mode})")
    return _per_structure(_cached(mode, fn, mask, (has_aux, single), build), fn,
                          lambda g: vjp_of(g, mask, mode, has_aux, single))


def vmap_of(fn, in_types: tuple) -> Transformed:
    """`fn` batched for arguments of batch types `in_types` (compiler/transforms/batch/vmap.py);
    it takes one more argument, the number of examples."""
    from redraft.compiler.transforms.calls import custom
    if isinstance(fn, custom.custom_jvp):
        return _batched_custom_jvp(fn, tuple(in_types))
    if isinstance(fn, custom.custom_vjp):  # batched as its function; its rule is not
        fn = fn.fun

    def build():
        core, batched = _transformer("vmap")(fn, in_types)
        return batched, _header(core, "batched (vmap)")
    return _per_structure(_cached("batched", fn, tuple(in_types), (), build), fn,
                          lambda g: vmap_of(g, in_types))


def _batched_custom_jvp(fn, in_types: tuple):
    """vmap of a custom_jvp function: again a custom_jvp, whose function is the batched
    function and whose rule is the batched rule, so jvp(vmap(f)) uses the user's rule."""
    from redraft.compiler.transforms.calls import custom
    def build() -> Transformed:
        batched = custom.custom_jvp(vmap_of(fn.fun, in_types).fn)
        if fn.jvp_rule is not None:
            rule = vmap_of(fn.jvp_rule, (bt.tup(in_types), bt.tup(in_types)))
            batched.jvp_rule = CoreFunction(custom.batched_rule_core(fn, rule, len(in_types)))
        return Transformed(("batched custom_jvp", in_types), lambda: batched,
                           f"{fn.__name__}_batched")
    return TRANSFORM_CACHE.get(fn, ("batched custom_jvp", in_types), build)


def _header(core, what: str) -> str:
    return (f"Generated by redraft: {what} of {core.name}, from {core.filename}:"
            f"{core.firstline}.\nEdit the original function, not this file.")


def _is_custom(fn) -> bool:
    from redraft.compiler.transforms.calls import custom
    return custom.is_custom(fn)


def _custom_bwd(fn, mask: tuple[bool, ...], single: bool):
    """The backward Core of a custom_vjp (its rules) or custom_jvp (its rule, transposed)."""
    from redraft.compiler.transforms.calls import custom
    if isinstance(fn, custom.custom_vjp):
        return custom.custom_vjp_bwd_core(fn, mask, single)
    tangent_map = CoreFunction(custom.custom_jvp_tangent_map(fn))
    linear_mask = tuple(False for _ in mask) + tuple(mask)
    transpose = vjp_of(tangent_map, linear_mask, "bwd", single=single)
    return custom.custom_jvp_bwd_core(fn, mask, transpose)
