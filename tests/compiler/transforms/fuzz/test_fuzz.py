"""The differential fuzzer in the normal suite: a fixed-seed run of generated programs per
property (`make fuzz` runs the long one, run_fuzz.py).

While known bugs remain open, the in-suite strategy leaves out the constructs they hit and
the properties they break, each named below with the strict-xfail regression test that
covers it; when a fix lands, its xfail turns into an unexpected pass and its entry here goes
(so the fuzzer covers the construct again).
"""
from __future__ import annotations

import dataclasses
import os
import warnings

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import programs as progs
import properties as props

# construct switched off (programs.Features field) -> the regression test of the bug it hits
KNOWN_OPEN_CONSTRUCTS: dict[str, str] = {}
# property left out -> the regression test of the bug that breaks it on every program
KNOWN_OPEN_PROPERTIES: dict[str, str] = {}

SUITE_FEATURES = dataclasses.replace(progs.FULL, **{k: False for k in KNOWN_OPEN_CONSTRUCTS})
SUITE_PROPERTIES = [p for p in props.PROPERTIES if p not in KNOWN_OPEN_PROPERTIES]
EXAMPLES = int(os.environ.get("FUZZ_SUITE_EXAMPLES", "300"))


def test_properties_hold_on_generated_programs():
    """Every in-suite property on EXAMPLES programs (derandomized: the same programs on every
    run); a failure shows the shrunk program and each property it breaks."""
    warnings.simplefilter("ignore", SyntaxWarning)

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate])  # make fuzz shrinks; here it is slow
    @given(progs.programs(SUITE_FEATURES), st.integers(0, 2**31 - 1))
    def run(program, seed):
        try:
            outcomes = props.check(program.text, seed, SUITE_PROPERTIES)
        except props.Invalid:
            return
        failed = [f"{name} {o.kind}: {o.detail}" for name, o in outcomes.items() if o.failed]
        assert not failed, "\n".join(failed) + f"\ninput seed {seed}\n{program.text}"
    run()


def test_known_open_entries_name_real_features_and_tests():
    """The exclusion lists stay honest: every entry names a construct or property that exists
    and a regression test that exists."""
    import test_regressions
    fields = {f.name for f in dataclasses.fields(progs.Features)}
    for construct, test in KNOWN_OPEN_CONSTRUCTS.items():
        assert construct in fields
        assert hasattr(test_regressions, test.split("::")[1])
    for prop, test in KNOWN_OPEN_PROPERTIES.items():
        assert prop in props.PROPERTIES
        assert hasattr(test_regressions, test.split("::")[1])
