"""The long fuzz run (`make fuzz`): many programs from the full strategy, counts by property,
then one shrunk minimal program for each distinct failure.

    FUZZ_EXAMPLES=10000 make fuzz          # how many programs (default 1000)
    FUZZ_SEED=7 FUZZ_SHRINK=0 make fuzz    # another sequence; counts only, no shrinking
    FUZZ_FEATURES=suite make fuzz          # the in-suite strategy instead of the full one

Phase 1 runs every property on every program and counts outcomes ("ill": a disagreement at
inputs where the program is ill-conditioned, see properties.ill_conditioned: every one is
reported with its program, and none counts as a pass). Phase 2 takes each
distinct failure signature (property, and "wrong" or the exception's type) and lets
hypothesis shrink the first program that shows it, replaying the same seeded sequence with a
test that fails only on that signature. The minimal programs are printed (and written to
$FUZZ_OUT when set), ready to paste into test_regressions.py.
"""
from __future__ import annotations

import collections
import os
import pathlib
import re
import sys
import time
import warnings

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import programs as progs  # noqa: E402
import properties as props  # noqa: E402


def signature(name: str, outcome: props.Outcome) -> tuple[str, str]:
    """What makes two failures the same bug for shrinking: the property and the wrong number,
    or the property and the exception type with the message's first words (paths removed)."""
    if outcome.kind in ("wrong", "ill"):
        return name, outcome.kind
    text = re.sub(r"\S*/\S+\.py(:\d+)?:?", "", outcome.detail)
    text = re.sub(r"'[^']*'|`[^`]*`", "NAME", text)
    return name, " ".join(text.split()[:6])


def _settings(n: int, phases=None):
    kwargs = dict(max_examples=n, deadline=None, database=None, print_blob=False,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    if phases is not None:
        kwargs["phases"] = phases
    return settings(**kwargs)


def count(features: progs.Features, n: int, fuzz_seed: int, names):
    """Phase 1: every property on n programs; (counts, first program per failure
    signature, every ill-conditioned disagreement, how many programs were untame)."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    first: dict[tuple[str, str], tuple[str, str]] = {}
    ill: list[tuple[str, str, int, str]] = []
    invalid = collections.Counter()

    @seed(fuzz_seed)
    @_settings(n)
    @given(progs.programs(features), st.integers(0, 2**31 - 1))
    def run(program, input_seed):
        try:
            outcomes = props.check(program.text, input_seed, names)
        except props.Invalid:
            invalid["programs"] += 1
            return
        counts["programs"]["tried"] += 1
        for name, outcome in outcomes.items():
            counts[name][outcome.kind] += 1
            if outcome.failed:
                first.setdefault(signature(name, outcome),
                                 (program.text, input_seed, outcome.detail))
            elif outcome.kind == "ill":
                ill.append((name, program.text, input_seed, outcome.detail))
    run()
    return counts, first, ill, invalid["programs"]


def shrink(features: progs.Features, n: int, fuzz_seed: int, sig: tuple[str, str]):
    """Phase 2: the minimal program hypothesis finds for one failure signature."""
    name = sig[0]
    last: list[tuple[str, int, str]] = []
    stop_at = time.time() + float(os.environ.get("FUZZ_SHRINK_S", "60"))

    class Found(Exception):
        pass

    @seed(fuzz_seed)
    @_settings(n)
    @given(progs.programs(features), st.integers(0, 2**31 - 1))
    def run(program, input_seed):
        if time.time() > stop_at and last:
            return  # out of shrinking time: keep the smallest failure found so far
        try:
            outcomes = props.check(program.text, input_seed, [name])
        except props.Invalid:
            return
        outcome = outcomes.get(name)
        if outcome is not None and outcome.failed and signature(name, outcome) == sig:
            last.append((program.text, input_seed, outcome.detail))
            raise Found(outcome.detail)
    try:
        run()
    except Exception:  # Found, or hypothesis's complaint when time ran out mid-shrink
        pass
    return min(last, key=lambda found: len(found[0])) if last else None


def table(counts) -> str:
    kinds = ("pass", "wrong", "raised", "skip", "ill")
    rows = [f"{'property':10} {'tried':>7} " + " ".join(f"{k:>7}" for k in kinds)]
    for name in props.PROPERTIES:
        c = counts.get(name, collections.Counter())
        rows.append(f"{name:10} {sum(c.values()):7d} " + " ".join(f"{c[k]:7d}" for k in kinds))
    return "\n".join(rows)


def main() -> int:
    warnings.simplefilter("ignore")
    n = int(os.environ.get("FUZZ_EXAMPLES", "1000"))
    fuzz_seed = int(os.environ.get("FUZZ_SEED", "0"))
    features, names = progs.FULL, list(props.PROPERTIES)
    if os.environ.get("FUZZ_FEATURES") == "suite":
        from test_fuzz import SUITE_FEATURES, SUITE_PROPERTIES
        features, names = SUITE_FEATURES, SUITE_PROPERTIES
    start = time.time()
    counts, first, ill, invalid = count(features, n, fuzz_seed, names)
    took = time.time() - start
    print(f"\nredraft fuzz: {counts['programs']['tried']} programs "
          f"({invalid} rejected as untame), seed {fuzz_seed}, {took:.0f} s\n")
    print(table(counts))
    failures = sorted(first)
    print(f"\n{len(failures)} distinct failure signatures")
    report = []
    for sig in failures:
        found = None
        if os.environ.get("FUZZ_SHRINK") != "0":
            found = shrink(features, n, fuzz_seed, sig)
        text, input_seed, detail = found or first[sig]
        report.append(f"### {sig[0]}: {sig[1]}\n# input seed {input_seed}\n# {detail}\n{text}")
        print("\n" + report[-1], flush=True)
    print(f"\n{len(ill)} ill-conditioned disagreements (not counted as passes)")
    for name, text, input_seed, detail in ill:
        report.append(f"### {name}: ill\n# input seed {input_seed}\n# {detail}\n{text}")
        print("\n" + report[-1], flush=True)
    if os.environ.get("FUZZ_OUT"):
        pathlib.Path(os.environ["FUZZ_OUT"]).write_text("\n\n".join(report) + "\n")
    wrong = sum(c["wrong"] for k, c in counts.items() if k != "programs")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
