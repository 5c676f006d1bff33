"""Runs a `Program`'s launch sequence on a device: the host side of a compiled function.

A device is anything with `upload(ndarray) -> buffer`, `empty(slot) -> buffer`,
`download(buffer, dtype, shape) -> ndarray`, `read_scalar(buffer, view) -> value` and
`launch(kernel, buffers)`: the host emulation (emulate.py) or a GPU binding
(redraft/runtime/cuda.py). Arrays are immutable, so control flow rebinds buffers instead of
copying them.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from .program import Cond, For, Launch, Program, While


class Device(Protocol):
    def upload(self, value: np.ndarray): ...
    def empty(self, slot): ...
    def download(self, buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray: ...
    def read_scalar(self, buffer, view) -> object: ...
    def launch(self, kernel, buffers: list) -> None: ...


def run(program: Program, device: Device, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The program's results for host `inputs` (uploaded, run, downloaded)."""
    handles = [device.upload(np.ascontiguousarray(value, dtype=slot.dtype))
               for slot, value in zip(program.params, inputs)]
    env = _launch(program, device, handles)
    outs = []
    for r, aval in zip(program.results, program.result_avals):
        if isinstance(r, np.ndarray):
            outs.append(r.copy())
        else:
            outs.append(device.download(env[r.id], r.dtype, tuple(aval.shape)))
    return outs


def run_on_device(program: Program, device: Device, handles: list) -> list:
    """The device buffers of the program's results for device buffers `handles` (the
    inputs, never written): nothing is read back but control flow's predicates."""
    env = _launch(program, device, handles)
    return [device.upload(np.ascontiguousarray(r)) if isinstance(r, np.ndarray) else env[r.id]
            for r in program.results]


def _launch(program: Program, device: Device, handles: list) -> dict[int, object]:
    env: dict[int, object] = {slot.id: h for slot, h in zip(program.params, handles)}
    for slot, value in program.constants:
        env[slot.id] = device.upload(value)
    _steps(program.steps, env, device)
    return env


def _pred(view, env, device) -> bool:
    if view.const is not None:
        return bool(view.const)
    return bool(device.read_scalar(env[view.base.id], view))


def _index(view, env, device) -> int:
    if view.const is not None:
        return int(view.const)
    return int(device.read_scalar(env[view.base.id], view))


def _bind(env, targets, sources) -> None:
    values = [env[s.id] for s in sources]
    for t, v in zip(targets, values):
        env[t.id] = v


def _steps(steps: list, env: dict, device: Device) -> None:
    for step in steps:
        if isinstance(step, Launch):
            for slot in step.fresh:
                env[slot.id] = device.empty(slot)
            device.launch(step.kernel, [env[s.id] for s in step.args])
        elif isinstance(step, Cond):
            steps_, results = step.branches[0 if _pred(step.pred, env, device) else 1]
            _steps(steps_, env, device)
            _bind(env, step.outs, results)
        elif isinstance(step, While):
            state = step.inits
            _bind(env, step.cond_params, state)
            _steps(step.cond_steps, env, device)
            while _pred(step.pred, env, device):
                _bind(env, step.body_params, step.cond_params)
                _steps(step.body_steps, env, device)
                _bind(env, step.cond_params, step.body_results)
                _steps(step.cond_steps, env, device)
            _bind(env, step.outs, step.cond_params)
        elif isinstance(step, For):
            _bind(env, step.params, step.inits)
            lo, hi = _index(step.lo, env, device), _index(step.hi, env, device)
            for i in range(lo, hi):
                env[step.index.id] = device.upload(np.array(i, dtype=step.index.dtype))
                _steps(step.steps, env, device)
                _bind(env, step.params, step.results)
            _bind(env, step.outs, step.params)
        else:
            raise TypeError(f"unknown step {step!r}")
