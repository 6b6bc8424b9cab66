"""Round 12: enum classes and case bounds (tests/tools/classify/fixtures/repo/tests/round12_cases). The classifier's
node ids equal `pytest --collect-only -q`'s for an Enum class (or a dict) given as parametrize argument values or
fixture params; labels are in fixtures/expected.json (test_classify_corpus.py)."""

from __future__ import annotations

ROUND12 = "tests/round12_cases"
ENUMS = f"{ROUND12}/test_enum_cases.py"


def test_enum_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(ENUMS)
    assert len(got.collected) == 15, got.output
    assert got.function_only == got.not_collected == set()
    # aliases are not iterated; a Flag gives its single bits; a str mixin is id'd by its value
    assert f"{ENUMS}::test_plain_enum[Color.RED]" in got.tests
    assert not any("CRIMSON" in k or "LIME" in k or "Perm.RW" in k or "Perm.NONE" in k for k in got.tests)
    gpu = {k for k, v in got.tests.items() if v.label == "gpu"}
    assert gpu == {f"{ENUMS}::test_device_members[cuda]"}


def test_over_the_case_bound_one_verdict_that_says_why(ids_vs_pytest) -> None:
    many = f"{ROUND12}/test_many_cases.py"
    got = ids_vs_pytest(many)
    assert len(got.collected) == 12288 + 16, got.output
    key = f"{many}::test_many"
    # one analysis for the function; its ids are still spelled (round 21), each with that verdict
    assert got.function_only == set()
    assert got.not_collected == {key}
    reasons = got.tests[key].reasons
    assert "12,288 parametrizations, over the classifier's bound of 8,192 cases" in reasons[0], reasons
    assert "each id has this function-level verdict" in reasons[0], reasons
    assert got.tests[key].label == "cpu"
    cases = [k for k in got.tests if k.startswith(key + "[")]
    assert len(cases) == 12288 and all(got.tests[k] == got.tests[key] for k in cases)
    # a test under the bound keeps its exact ids
    gpu = {k for k, v in got.tests.items() if v.label == "gpu"}
    assert len(gpu) == 8 and all("::test_few[cuda-" in k for k in gpu)
