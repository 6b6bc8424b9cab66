"""The Python half of the contract's parity test: tests/rules/contract_cases.json through tools/contract.

The Starlark half (`bazel test //tests/rules:contract_parity_test`) runs the same cases through
rules/private/contract.bzl and tags.bzl, reading them from tests/rules/contract_cases.bzl, which is
generated from the JSON. `python3 tests/tools/contract/test_contract_parity.py` rewrites it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tools.atomic_write import write_text_atomic  # noqa: E402
from tools.contract import classification, runtime, tags  # noqa: E402

CASES_JSON = REPO / "tests" / "rules" / "contract_cases.json"
CASES_BZL = REPO / "tests" / "rules" / "contract_cases.bzl"
CASES = json.loads(CASES_JSON.read_text(encoding="utf-8"))


def render_bzl(json_text: str) -> str:
    """contract_cases.bzl: the JSON text as one Starlark string (ASCII, so no escape Starlark lacks)."""
    compact = json.dumps(json.loads(json_text), ensure_ascii=True, sort_keys=True)
    literal = compact.replace("\\", "\\\\").replace('"', '\\"')
    return ('"""Generated from contract_cases.json by tests/tools/contract/test_contract_parity.py. Do not edit."""\n\n'
            f'CASES = json.decode("{literal}")\n')


def _ids(section: str) -> list[str]:
    return [case.get("name") or repr(case.get("tags")) for case in CASES[section]]


@pytest.mark.parametrize("case", CASES["validate"], ids=_ids("validate"))
def test_validator(case: dict[str, Any]) -> None:
    if case["error"] is None:
        classification.validate(case["data"], "cases")
    else:
        with pytest.raises(classification.ClassificationFileError) as err:
            classification.validate(case["data"], "cases")
        assert case["error"] in str(err.value)


@pytest.mark.parametrize("case", CASES["paths"], ids=[repr(c["path"]) for c in CASES["paths"]])
def test_canonical_paths(case: dict[str, Any]) -> None:
    assert classification.canonical_path(case["path"]) is case["canonical"]


@pytest.mark.parametrize("case", CASES["keys"], ids=_ids("keys"))
def test_key_resolution(case: dict[str, Any]) -> None:
    assert runtime.resolve_key(case["tests"], case["key"]) == case["resolved"]
    assert runtime.route_label(case["tests"], case["key"]) == case["label"]


@pytest.mark.parametrize("case", CASES["format"], ids=_ids("format"))
def test_tag_formatting(case: dict[str, Any]) -> None:
    args = dict(case["args"])
    assert tags.part_tags(args.pop("device"), **args) == case["tags"]


@pytest.mark.parametrize("case", CASES["parse"], ids=_ids("parse"))
def test_tag_parsing(case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(tags.TagError) as err:
            tags.parse(case["tags"])
        assert case["error"] in str(err.value)
    else:
        assert tags.parse(case["tags"]).as_dict() == case["values"]


def test_every_formatted_tag_parses_back() -> None:
    """What part_tags writes, parse reads: a renamed key on one side only fails here."""
    for case in CASES["format"]:
        values = tags.parse(case["tags"]).as_dict()
        if case["args"]["device"] == "gpu":
            assert values["gpu_count"] == values["resources_gpu"] == case["args"]["gpu_count"], case["name"]
        assert all(tags.is_ours(t) for t in case["tags"]), case["name"]


def test_the_starlark_copy_of_the_cases_is_current() -> None:
    want = render_bzl(CASES_JSON.read_text(encoding="utf-8"))
    assert CASES_BZL.read_text(encoding="utf-8") == want, (
        f"{CASES_BZL.relative_to(REPO)} is stale: run `python3 {Path(__file__).relative_to(REPO)}`")


if __name__ == "__main__":
    write_text_atomic(CASES_BZL, render_bzl(CASES_JSON.read_text(encoding="utf-8")))
    print(f"wrote {CASES_BZL.relative_to(REPO)}")
