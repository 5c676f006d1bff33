"""The runtime's rendezvous: combine once, share the result, fail fast, never hang."""
import threading

import numpy as np
import pytest
from redraft.runtime import collectives as rc


def _run_all(n: int, fn):
    results, errors = [None] * n, [None] * n

    def run(i):
        try:
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 - collected for the assertions
            errors[i] = e
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return results, errors


def test_every_participant_gets_the_combined_values_in_order():
    group = rc.Group(3)
    calls = []

    def combine(values):
        calls.append(1)
        return tuple(values)
    results, errors = _run_all(3, lambda i: [group.exchange(i, (i, k), combine, "t")
                                             for k in range(4)])
    assert errors == [None] * 3
    for k in range(4):
        assert {r[k] for r in results} == {((0, k), (1, k), (2, k))}
    assert len(calls) == 4  # once per round


def test_sets_of_participants_keyed_apart_do_not_mix():
    group = rc.Group(2)
    results, errors = _run_all(4, lambda i: group.exchange(i % 2, i, sum, "t", key=(i // 2,)))
    assert errors == [None] * 4
    assert results == [1, 1, 5, 5]


def test_a_missing_participant_times_out(monkeypatch):
    monkeypatch.setenv("REDRAFT_COLLECTIVE_TIMEOUT", "0.2")
    group = rc.Group(2)
    with pytest.raises(rc.CollectiveError, match="only 1 of 2 participants arrived"):
        group.exchange(0, 1, sum, "lax.psum")


def test_an_aborted_group_fails_the_waiting_and_the_late():
    group = rc.Group(2)
    _, errors = _run_all(2, lambda i: group.exchange(0, 1, sum, "lax.psum") if i == 0
                         else group.abort(1, RuntimeError("boom")))
    assert isinstance(errors[0], rc.CollectiveError) and "boom" in str(errors[0])
    with pytest.raises(rc.CollectiveError, match="participant 1"):
        group.exchange(1, 1, sum, "lax.psum")


def test_reductions_on_host_buffers_under_a_bound_axis():
    group = rc.Group(2)

    def device(i):
        with rc.bound(rc.AxisFrame("i", 2, i, i, group)):
            x = np.array([1.0, -1.0]) * (i + 1)
            return (rc.all_reduce(x, "i", "sum", "psum"), rc.all_reduce(x, "i", "max", "pmax"),
                    rc.all_gather(x, "i", "all_gather"), rc.permute(x, "i", ((0, 1),), "pp"))
    results, errors = _run_all(2, device)
    assert errors == [None, None]
    for i, (total, top, gathered, shifted) in enumerate(results):
        np.testing.assert_array_equal(total, [3.0, -3.0])
        np.testing.assert_array_equal(top, [2.0, -1.0])
        np.testing.assert_array_equal(gathered, [[1.0, -1.0], [2.0, -2.0]])
        np.testing.assert_array_equal(shifted, [[0.0, 0.0], [1.0, -1.0]][i])


def test_an_unbound_axis_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        rc.frame_of("k", "lax.psum")
