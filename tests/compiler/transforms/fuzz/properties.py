"""The fuzzer's properties: each compares one redraft transform with an independent method.

A generated program is loaded twice from its file: with `jnp` = redraft.numpy (float32, under
test) and with `jnp` = the float64 NumPy stand-in (np64.py, the reference). Each property
returns an Outcome: "pass", "wrong" (a number disagrees), "raised" (redraft raised where the
program's eager run works), "skip" (the reference does not apply, e.g. finite differences
across a branch boundary) or "ill" (a number disagrees, but the program is ill-conditioned at
its inputs: float64 decides a branch within rounding of its threshold, or values overflow
float32; counted and reported on their own, never as a pass).
"""
from __future__ import annotations

import dataclasses
import functools
import os
import pathlib
import pickle
import select
import signal
import tempfile
import time
from typing import Callable

import numpy as np

import np64
import programs as progs

import redraft
import redraft.numpy as rnp

TIMEOUT_S = 10.0   # a transformed function that never ends is a failure, not a hang
BATCH = 3


@dataclasses.dataclass
class Outcome:
    kind: str                # pass | wrong | raised | skip | ill
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind in ("wrong", "raised")


class Invalid(Exception):
    """The program itself is unusable (not finite, or the reference cannot run it)."""


class TimedOut(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` on the way (in
    redraft or in generated code) can swallow it and keep a never-ending loop going."""


@dataclasses.dataclass
class Case:
    """One program with its inputs, loaded for redraft (f32) and the reference (f64)."""
    text: str
    f32: Callable
    f64: Callable
    module: object
    x: np.ndarray
    w: np.ndarray
    vx: np.ndarray
    vw: np.ndarray
    u: float
    ill: str | None = None   # ill_conditioned's answer, once asked

    def args32(self, x=None, w=None):
        return (rnp.asarray(self.x if x is None else x), rnp.asarray(self.w if w is None else w))

    def f64_at(self, x, w) -> float:
        return float(self.f64(np64.wrap(x), np64.wrap(w)))


def make_case(text: str, seed: int) -> Case:
    """Load the program and draw its inputs; Invalid if the float64 run is unusable."""
    module = progs.load(text)
    ref = progs.load(text)
    ref.jnp = np64
    rng = np.random.default_rng(seed)
    draw = lambda *shape: rng.uniform(-1.0, 1.0, shape).astype(np.float32)  # noqa: E731
    case = Case(text, module.f, ref.f, module, draw(3), draw(3, 3), draw(3), draw(3, 3),
                float(draw()))
    try:
        with _deadline():
            value = case.f64_at(case.x.astype(np.float64), case.w.astype(np.float64))
    except (Exception, TimedOut) as err:  # a generator bug: the program must run in NumPy
        raise Invalid(f"reference raised {type(err).__name__}: {err}") from err
    if not np.isfinite(value) or abs(value) > 1e4:
        raise Invalid(f"value {value} is not tame")
    return case


# ---- comparing ------------------------------------------------------------------------------
def _leaves(tree) -> list[np.ndarray]:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [np.asarray(tree, dtype=np.float64)]


def close(got, want, rtol: float = 2e-3) -> str:
    """'' when every leaf of `got` matches `want`, else a description of the worst leaf.
    NaN matches NaN and an infinity the same infinity, at the same places only; the finite
    entries must agree within rtol of the largest finite expected magnitude."""
    gl, wl = _leaves(got), _leaves(want)
    if len(gl) != len(wl):
        return f"{len(gl)} results where {len(wl)} expected"
    for k, (g, w) in enumerate(zip(gl, wl)):
        if g.shape != w.shape:
            return f"result {k}: shape {g.shape}, expected {w.shape}"
        finite = np.isfinite(w)
        same_special = np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(
            np.where(finite, 0.0, np.nan_to_num(w)), np.where(finite, 0.0, np.nan_to_num(g)))
        scale = 1.0 + float(np.max(np.abs(w[finite]), initial=0.0))
        err = float(np.max(np.abs(g[finite] - w[finite]), initial=0.0))
        if not same_special or not np.all(np.isfinite(g[finite])) or err > rtol * scale:
            return (f"result {k}: got {np.array2string(g, precision=5)}, "
                    f"expected {np.array2string(w, precision=5)} (max error {err:.3g})")
    return ""


def _verdict(got, want, what: str, rtol: float = 2e-3, case: "Case | None" = None) -> Outcome:
    """pass, or wrong; or ill where `case` is given and is ill-conditioned at its inputs."""
    diff = close(got, want, rtol)
    if not diff:
        return Outcome("pass")
    why = ill_conditioned(case) if case is not None else ""
    if why:
        return Outcome("ill", f"{what}: {diff}; {why}")
    return Outcome("wrong", f"{what}: {diff}")


# ---- ill-conditioned inputs --------------------------------------------------------------------
ROUNDING = 1e-5   # how far float32 rounding may move a program's inputs' effect, generously
PEAK = 1e15       # intermediates beyond this overflow float32 in products of derivatives
FLOOR = float(np.finfo(np.float32).tiny)  # nonzero intermediates below this underflow float32


def ill_conditioned(case: Case) -> str:
    """Why a disagreement at the case's inputs may be float32 against float64 rather than a
    bug: '' when it cannot be. Three causes: (1) the float64 program jumps in value or in
    slope along v within ROUNDING of the inputs (a branch, `where` or loop exit decided by
    rounding: float32 may take the other side); (2) a float64 intermediate exceeds PEAK
    (float32 overflows to inf, and inf - inf or 0 * inf make NaN in derivatives); (3) a
    nonzero float64 intermediate is below float32's smallest normal number (float32 makes
    it 0 or loses its digits, and a comparison with 0 goes the other way)."""
    if case.ill is None:
        case.ill = _ill_reason(case)
    return case.ill


def _ill_reason(case: Case) -> str:
    x, w = case.x.astype(np.float64), case.w.astype(np.float64)
    vx, vw = case.vx.astype(np.float64), case.vw.astype(np.float64)
    np64.reset()
    value = case.f64_at(x, w)
    peak, floor = np64.EXTREMES
    if peak > PEAK:
        return f"ill-conditioned: a float64 intermediate reaches {peak:.3g} (float32 overflows)"
    if floor < FLOOR:
        return (f"ill-conditioned: a float64 intermediate is as small as {floor:.3g} (float32 "
                "underflows)")

    def slope(px, pw, h=1e-7):
        return (case.f64_at(px + h * vx, pw + h * vw) - case.f64_at(px - h * vx, pw - h * vw)) / (
            2 * h)
    base = slope(x, w)
    rng = np.random.default_rng(0)
    for _ in range(8):
        dx, dw = rng.uniform(-ROUNDING, ROUNDING, x.shape), rng.uniform(-ROUNDING, ROUNDING,
                                                                         w.shape)
        near = case.f64_at(x + dx, w + dw)
        if abs(near - value) > 1e-3 * (1.0 + abs(value)):
            return (f"ill-conditioned: the float64 value jumps from {value:.6g} to "
                    f"{near:.6g} within {ROUNDING:g} of the inputs (a branch decided by "
                    "rounding)")
        there = slope(x + dx, w + dw)
        if abs(there - base) > 1e-3 * (1.0 + abs(base)):
            return (f"ill-conditioned: the float64 slope along v jumps from {base:.6g} to "
                    f"{there:.6g} within {ROUNDING:g} of the inputs (a kink decided by "
                    "rounding)")
    return ""


class _deadline:
    def __enter__(self):
        def ring(signum, frame):
            if frame is not None and frame.f_code.co_name == "gc_callback":
                return  # an exception there is swallowed: ring again in a moment
            raise TimedOut(f"did not finish in {TIMEOUT_S:.0f} s")
        self._old = signal.signal(signal.SIGALRM, ring)
        # rings again every 0.1 s until cleared, in case one lands where it cannot raise
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S, 0.1)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._old)
        return False


def _guarded(check: Callable[[Case], Outcome]) -> Callable[[Case], Outcome]:
    """The property with a time limit: a transformed loop that never ends becomes a "raised"
    outcome, as does any exception."""
    def run(case: Case) -> Outcome:
        try:
            with _deadline():
                return _caught(check, case)
        except TimedOut as err:
            return Outcome("raised", f"TimedOut: {err}")
    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    return run


def _compiled(check: Callable[[Case], Outcome]) -> Callable[[Case], Outcome]:
    """The property run in a forked child: compiled code that never ends (no signal gets
    through) or crashes becomes a "raised" outcome instead of hanging the fuzzer."""
    def run(case: Case) -> Outcome:
        _warm_up()
        return _in_child(lambda: _caught(check, case))
    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    return run


def _tiny(x, w):
    return rnp.sum(rnp.tanh(w @ x))


@functools.lru_cache(maxsize=None)
def _warm_up() -> None:
    """Compile once in the parent, so each child starts with the compiler loaded."""
    x, w = rnp.ones(3), rnp.ones((3, 3))
    redraft.jit(_tiny)(x, w)
    redraft.jit(redraft.grad(_tiny, argnums=(0, 1)))(x, w)


def _caught(check: Callable[[Case], Outcome], case: Case) -> Outcome:
    try:
        return check(case)
    except Exception as err:
        detail = f"{type(err).__name__}: {_first_line(err)}"
        if progs.SHAPE_IF_MARK in case.text and "shape" in str(err):
            return Outcome("skip", f"refused a value with two shapes: {detail}")
        return Outcome("raised", detail)


def _in_child(work: Callable[[], Outcome]) -> Outcome:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send the pickled outcome, leave without cleanup
        os.close(read_end)
        try:
            outcome = work()
        except BaseException as err:  # noqa: BLE001 - everything must reach the parent
            outcome = Outcome("raised", f"{type(err).__name__}: {_first_line(err)}")
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(pickle.dumps(outcome))
        os._exit(0)
    os.close(write_end)
    data = b""
    deadline = time.monotonic() + TIMEOUT_S
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return Outcome("raised", f"TimedOut: did not finish in {TIMEOUT_S:.0f} s")
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            data += chunk
    _, status = os.waitpid(pid, 0)
    if not data:
        return Outcome("raised", f"Crashed: the process ended with status {status}")
    return pickle.loads(data)


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else ""


# ---- float64 references ---------------------------------------------------------------------
def _fd(case: Case) -> float | None:
    """Central difference of the float64 program along (vx, vw); None where two step sizes
    disagree (the direction crosses a branch or a kink, so no derivative to compare with)."""
    x, w = case.x.astype(np.float64), case.w.astype(np.float64)
    vx, vw = case.vx.astype(np.float64), case.vw.astype(np.float64)

    def slope(h: float) -> float:
        return (case.f64_at(x + h * vx, w + h * vw) - case.f64_at(x - h * vx, w - h * vw)) / (2 * h)
    coarse, fine = slope(1e-3), slope(1e-5)
    if abs(coarse - fine) > 1e-4 * (1.0 + abs(fine)):
        return None
    return fine


# ---- properties -----------------------------------------------------------------------------
@_guarded
def value(case: Case) -> Outcome:
    """Eager redraft (float32) against the float64 NumPy run of the same text."""
    want = case.f64_at(case.x.astype(np.float64), case.w.astype(np.float64))
    return _verdict(case.f32(*case.args32()), want, "f(x, w)", case=case)


def _dot(grads, case: Case) -> float:
    gx, gw = (np.asarray(g, dtype=np.float64) for g in grads)
    return float(np.sum(gx * case.vx) + np.sum(gw * case.vw))


@_guarded
def jvp_fd(case: Case) -> Outcome:
    """Forward mode against float64 central differences."""
    want = _fd(case)
    if want is None:
        return Outcome("skip", "not smooth along v")
    _, tangent = redraft.jvp(case.f32, case.args32(), case.args32(case.vx, case.vw))
    return _verdict(tangent, want, "jvp tangent along v", rtol=5e-3, case=case)


@_guarded
def grad_fd(case: Case) -> Outcome:
    """Reverse mode against float64 central differences: <grad f, v>."""
    want = _fd(case)
    if want is None:
        return Outcome("skip", "not smooth along v")
    grads = redraft.grad(case.f32, argnums=(0, 1))(*case.args32())
    return _verdict(_dot(grads, case), want, "<grad f, v>", rtol=5e-3, case=case)


@_guarded
def vjp_jvp(case: Case) -> Outcome:
    """Reverse against forward mode: <u, J v> = <J^T u, v>."""
    _, tangent = redraft.jvp(case.f32, case.args32(), case.args32(case.vx, case.vw))
    _, pullback = redraft.vjp(case.f32, *case.args32())
    bars = pullback(rnp.asarray(np.float32(case.u)))
    return _verdict(_dot(bars, case), case.u * float(tangent), "<J^T u, v> vs <u, J v>",
                    case=case)


@_compiled
def jit(case: Case) -> Outcome:
    """jit against eager, for f and for grad f."""
    got = redraft.jit(case.f32)(*case.args32())
    outcome = _verdict(got, case.f32(*case.args32()), "jit(f)", case=case)
    if outcome.failed:
        return outcome
    g = redraft.grad(case.f32, argnums=(0, 1))
    return _verdict(redraft.jit(g)(*case.args32()), g(*case.args32()), "jit(grad f)",
                    case=case)


def _batch(case: Case) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(abs(hash(case.text)) % 2**32)
    xs = np.stack([case.x] + [rng.uniform(-1, 1, 3).astype(np.float32)
                              for _ in range(BATCH - 1)])
    ws = np.stack([case.w] + [rng.uniform(-1, 1, (3, 3)).astype(np.float32)
                              for _ in range(BATCH - 1)])
    return xs, ws


@_guarded
def vmap(case: Case) -> Outcome:
    """vmap against a Python loop plus stack, for f and for grad f."""
    xs, ws = _batch(case)
    got = redraft.vmap(case.f32)(rnp.asarray(xs), rnp.asarray(ws))
    want = np.stack([np.asarray(case.f32(*case.args32(x, w))) for x, w in zip(xs, ws)])
    outcome = _verdict(got, want, "vmap(f)", case=case)
    if outcome.failed:
        return outcome
    g = redraft.grad(case.f32, argnums=(0, 1))
    got = redraft.vmap(g)(rnp.asarray(xs), rnp.asarray(ws))
    each = [g(*case.args32(x, w)) for x, w in zip(xs, ws)]
    want = tuple(np.stack([np.asarray(e[k]) for e in each]) for k in range(2))
    return _verdict(got, want, "vmap(grad f)", case=case)


def _forward_over_reverse(case: Case):
    g = redraft.grad(case.f32, argnums=(0, 1))
    return redraft.jvp(g, case.args32(), case.args32(case.vx, case.vw))[1]


@_guarded
def hvp(case: Case) -> Outcome:
    """Hessian-vector product: jvp of grad against grad of <grad f, v> (reverse over
    reverse)."""
    f, vx, vw = case.f32, rnp.asarray(case.vx), rnp.asarray(case.vw)

    def directional(x, w):
        gx, gw = redraft.grad(f, argnums=(0, 1))(x, w)
        return rnp.sum(gx * vx) + rnp.sum(gw * vw)
    want = redraft.grad(directional, argnums=(0, 1))(*case.args32())
    return _verdict(_forward_over_reverse(case), want, "jvp(grad f) vs grad(<grad f, v>)",
                    case=case)


@_guarded
def hvp_gjvp(case: Case) -> Outcome:
    """Hessian-vector product: jvp of grad against grad of jvp (reverse over forward)."""
    f, vx, vw = case.f32, rnp.asarray(case.vx), rnp.asarray(case.vw)

    def directional(x, w):
        return redraft.jvp(f, (x, w), (vx, vw))[1]
    want = redraft.grad(directional, argnums=(0, 1))(*case.args32())
    return _verdict(_forward_over_reverse(case), want, "jvp(grad f) vs grad(jvp f)",
                    case=case)


@_guarded
def emit(case: Case) -> Outcome:
    """The emitted grad, jvp and vmap source, written to a file and run, against the
    transforms themselves."""
    from redraft.compiler.transforms.calls import callees
    from redraft.compiler.transforms.batch import batch_types as bt
    from redraft.compiler.transforms.calls.callable_core import core_of
    from redraft.compiler.transforms.batch.vmap_wrapper import spec_type, wrapper_of
    f, args = case.f32, case.args32()
    text = redraft.emit(f, "grad", argnums=(0, 1))
    made = callees.vjp_of(f, (True, True), "grad", False, False).fn
    got = _run_emitted(text, "f_grad", made.__globals__)(*args)
    outcome = _verdict(got, redraft.grad(f, argnums=(0, 1))(*args), "emitted grad", case=case)
    if outcome.failed:
        return outcome
    text = redraft.emit(f, "jvp", argnums=(0, 1))
    made = callees.jvp_of(f, (True, True)).fn
    tangents = case.args32(case.vx, case.vw)
    got = _run_emitted(text, "f_jvp", made.__globals__)(*args, *tangents)
    outcome = _verdict(got, redraft.jvp(f, args, tangents), "emitted jvp", case=case)
    if outcome.failed:
        return outcome
    xs, ws = (rnp.asarray(a) for a in _batch(case))
    text = redraft.emit(f, "vmap")
    types = (spec_type(0, bt.B), spec_type(0, bt.B))
    namespace = dict(callees.vmap_of(f, types).fn.__globals__)
    namespace.update(wrapper_of(f, core_of(f), 0, 0, None, bt.B).fn.__globals__)
    got = _run_emitted(text, "f_vmap", namespace)(xs, ws)
    return _verdict(got, redraft.vmap(f)(xs, ws), "emitted vmap", case=case)


_EMIT_DIR = pathlib.Path(tempfile.mkdtemp(prefix="redraft-fuzz-emit-"))


def _run_emitted(text: str, name: str, namespace: dict) -> Callable:
    """Write emitted source to a file of its own and execute it; the namespace gives the
    globals it names (jnp, ad, vm, callees)."""
    path = _EMIT_DIR / f"{name}_{abs(hash(text)) % 10**12}.py"
    path.write_text(text)
    globs = {k: v for k, v in namespace.items() if not k.startswith("__")}
    globs.update({"__name__": f"fuzz_emitted.{name}", "__file__": str(path)})
    exec(compile(text, str(path), "exec"), globs)
    return globs[name]


PROPERTIES: dict[str, Callable[[Case], Outcome]] = {
    "value": value, "jvp_fd": jvp_fd, "grad_fd": grad_fd, "vjp_jvp": vjp_jvp, "jit": jit,
    "vmap": vmap, "hvp": hvp, "hvp_gjvp": hvp_gjvp, "emit": emit,
}


def check(text: str, seed: int, names) -> dict[str, Outcome]:
    """Run the named properties on one program; Invalid if the program is unusable."""
    case = make_case(text, seed)
    eager = value(case)
    if eager.kind == "raised":
        return {"value": eager}
    out = {}
    for name in names:
        out[name] = eager if name == "value" else PROPERTIES[name](case)
    return out
