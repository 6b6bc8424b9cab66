"""Manifest, fleet and renderers against hostile input (issue #13): labels with shell characters,
non-canonical tag values, conflicting duplicates, non-finite or out-of-range numbers."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from bench.hostile_ops import (
    BAD_FLEET_POOLS,
    BAD_HEADROOM,
    BAD_MANIFEST_TESTS,
    BAD_TAGS,
    SPECIAL_LABELS,
    run_duplicate_case,
    run_fleet_case,
    run_headroom_case,
    run_manifest_case,
    run_render_case,
    run_tag_case,
)
from tools.gpu_manifest import schema
from tools.gpu_manifest.export import ExportError, TagFilter, build_manifest
from tools.gpu_manifest.query import QueryTarget
from tools.plan import render_k8s


def test_every_special_character_label_reaches_bazel_as_one_word_on_every_engine() -> None:
    outcomes = [run_render_case(label) for label in SPECIAL_LABELS]
    bad = [(o.case, o.verdict, o.detail) for o in outcomes if o.verdict != "ok"]
    assert len(outcomes) >= 47 and not bad, bad


def test_quoting_is_one_function_and_round_trips() -> None:
    for label in SPECIAL_LABELS:
        assert shlex.split(schema.command_for(label)) == ["bazel", "test", "--config=gpu", label]


def test_a_hand_written_command_with_unbalanced_quotes_is_a_schema_error_not_a_crash() -> None:
    entry = {"label": "//t:it's", "gpu_count": 1, "vram_gb": 4, "size": "medium", "timeout_s": 300,
             "estimated_duration_s": 60.0, "duration_source": "size", "command": "bazel test --config=gpu //t:it's"}
    problems = schema.validate({"schema_version": 1, "tests": [entry]})
    assert problems and problems[0].startswith("tests[0].command: not a valid shell word list (No closing quotation)")
    test = schema.ManifestTest(**entry)
    with pytest.raises(render_k8s.RenderError, match="//t:it's: command"):
        render_k8s.shell_command(test)


@pytest.mark.parametrize("key,value", BAD_MANIFEST_TESTS,
                         ids=[f"{k}-{i}" for i, (k, _) in enumerate(BAD_MANIFEST_TESTS)])
def test_bad_manifest_field_is_rejected_naming_the_field(key: str, value: object) -> None:
    outcome = run_manifest_case(key, value)
    assert outcome.verdict == "ok", outcome.detail


def test_k8s_deadline_overflow_named() -> None:
    entry = {"label": "//t:a", "gpu_count": 1, "vram_gb": 4, "size": "medium", "timeout_s": 10**20,
             "estimated_duration_s": float("inf"), "duration_source": "size", "command": "bazel test //t:a"}
    problems = schema.validate({"schema_version": 1, "tests": [entry]})
    assert "tests[0].timeout_s: expected int in [1, 31622400], got 100000000000000000000" in problems
    assert "tests[0].estimated_duration_s: expected a finite number in [0, 1e+09], got inf" in problems


@pytest.mark.parametrize("tags", BAD_TAGS, ids=[repr(t[0]) for t in BAD_TAGS])
def test_non_canonical_tag_values_are_export_errors(tags: tuple[str, ...]) -> None:
    outcome = run_tag_case(tags)
    assert outcome.verdict == "ok", outcome.detail


def test_duplicate_targets_with_conflicting_tags_are_an_error() -> None:
    assert run_duplicate_case().verdict == "ok"
    same = [QueryTarget("//t:a", "py_test", ("requires-gpu", "gpu-count:2"))] * 2  # an alias: same entry
    assert len(build_manifest(same, TagFilter.parse("requires-gpu"), None, {}).tests) == 1
    with pytest.raises(ExportError, match=r"//t:a: listed twice with conflicting gpu_count, tags \(2 vs 4\)"):
        build_manifest([same[0], QueryTarget("//t:a", "py_test", ("requires-gpu", "gpu-count:4"))],
                       TagFilter.parse("requires-gpu"), None, {})


@pytest.mark.parametrize("key,value", BAD_FLEET_POOLS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(BAD_FLEET_POOLS)])
def test_bad_fleet_value_is_rejected_naming_the_field(key: str, value: object) -> None:
    outcome = run_fleet_case(key, value)
    assert outcome.verdict == "ok", outcome.detail


@pytest.mark.parametrize("value", BAD_HEADROOM)
def test_plan_headroom_not_finite_is_a_clear_error(value: str, tmp_path: Path) -> None:
    outcome = run_headroom_case(value, tmp_path)
    assert outcome.verdict == "ok", outcome.detail
    assert outcome.detail.startswith("plan: error: --headroom: expected a finite number in [0, 10]")
