"""The names the contract owns are the names everything else uses: saved `bazel query` fixtures, the
Starlark twins' constants, and every TORCH_TEST_* variable spelled in rules/ and tools/.

A tag or variable renamed in tools/contract and not elsewhere (or the other way round) fails here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tools.contract import classification, runtime, tags  # noqa: E402
from tools.gpu_manifest import query  # noqa: E402

# Saved query output the GPU tools' tests read, wherever the tests keep it.
FIXTURES = sorted(p for p in (REPO / "tests").rglob("*query*")
                  if p.is_file() and p.suffix in (".xml", ".jsonl", ".json") and "consumer" not in p.parts)
# What looks like one of our tags; anything else is a user's or Bazel's.
LOOKS_OURS = re.compile(r"^(requires-|no-torch|torch-|gpu-|resources:gpu|cuda-)")
CONSTANT = re.compile(r'^([A-Z][A-Z0-9_]*) = "([^"]*)"$', re.MULTILINE)
VARIABLE = re.compile(r"\bTORCH_TEST_[A-Z0-9_]+\b")


def _ours(target_tags: tuple[str, ...]) -> list[str]:
    return sorted(t for t in target_tags if LOOKS_OURS.match(t))


def test_the_fixtures_are_found() -> None:
    assert len(FIXTURES) >= 4, FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_saved_query_output_carries_the_tags_torch_py_test_writes_today(path: Path) -> None:
    """Regenerate each target's tags from what they say (contract.tags.part_tags) and compare: a renamed,
    added or respelt tag makes the saved output stale, and this says which fixture to re-record."""
    text = path.read_text(encoding="utf-8")
    targets = query.parse(text, query.guess_format(text), str(path))
    assert targets, path
    for target in targets:
        ours = _ours(target.tags)
        unknown = [t for t in ours if not tags.is_ours(t)]
        assert not unknown, f"{path.name}: {target.label}: tags not in the vocabulary (docs/tags.md): {unknown}"
        values = tags.parse(target.tags)
        sources = [t.split(":", 1)[1] for t in ours if t.startswith(tags.LABEL_SOURCE + ":")]
        assert set(sources) <= set(tags.LABEL_SOURCES), f"{path.name}: {target.label}: {sources}"
        want = tags.part_tags(
            "gpu" if values.requires_gpu else "cpu", sources=sources, torch=tags.NO_TORCH not in target.tags,
            gpu_count=values.gpu_count or 0, vram_gb=values.vram_gb or 0, unclassified=tags.UNCLASSIFIED in ours,
            cuda_min=values.cuda_min, gpu_model=values.gpu_model, gpu_interconnect=values.gpu_interconnect)
        assert [t for t in ours if t != tags.EXCLUSIVE] == want, (
            f"{path.name}: {target.label}: saved tags differ from what torch_py_test writes now; re-record it")
    stray = sorted(set(VARIABLE.findall(text)) - set(runtime.VARIABLES))
    assert not stray, f"{path.name}: variables tools/contract/runtime.py does not define: {stray}"


def _constants(path: Path) -> dict[str, str]:
    return dict(CONSTANT.findall(path.read_text(encoding="utf-8")))


def test_tags_bzl_spells_the_vocabulary_as_tags_py_does() -> None:
    starlark = _constants(REPO / "rules" / "private" / "tags.bzl")
    python = {name: value for name, value in vars(tags).items()
              if name.isupper() and not name.startswith("_") and isinstance(value, str)}
    assert python and starlark == python


def test_contract_bzl_has_the_schemas_labels_sources_and_keys() -> None:
    text = (REPO / "rules" / "private" / "contract.bzl").read_text(encoding="utf-8")
    lists = {name: tuple(re.findall(r'"([^"]*)"', body))
             for name, body in re.findall(r"^_([A-Z_]+) = \[([^\]]*)\]", text, re.MULTILINE)}
    for name in ("FILE_LABELS", "TEST_LABELS", "SOURCES", "TOP_KEYS", "FILE_KEYS", "TEST_KEYS"):
        assert lists.get(name) == getattr(classification, name), name
    assert f"SCHEMA_VERSION = {classification.SCHEMA_VERSION}\n" in text


def test_contract_bzl_names_the_variables_as_runtime_py_does() -> None:
    starlark = {name.removeprefix("ENV_"): value
                for name, value in _constants(REPO / "rules" / "private" / "contract.bzl").items()
                if name.startswith("ENV_")}
    assert starlark and all(getattr(runtime, name) == value for name, value in starlark.items()), starlark


def test_contract_bzl_spells_the_machine_dependent_label_as_python_does() -> None:
    starlark = _constants(REPO / "rules" / "private" / "contract.bzl")
    assert starlark["ROUTE_CPU_WITHOUT_GPUS"] == runtime.ROUTE_CPU_WITHOUT_GPUS
    assert starlark["WITHOUT_GPUS"] == classification.WITHOUT_GPUS


def test_every_torch_test_variable_in_the_code_is_the_contracts() -> None:
    """The runner's glue, the perf tool and the macro spell some names as literals (the glue runs inside
    the tested repository's pytest, where `tools` may be someone else's package): they must be these."""
    used: dict[str, set[str]] = {}
    for path in [*(REPO / "rules").rglob("*.py"), *(REPO / "rules").rglob("*.bzl"), *(REPO / "tools").rglob("*.py")]:
        if path.parent.name == "contract" and path.parent.parent.name == "tools":
            continue
        for name in VARIABLE.findall(path.read_text(encoding="utf-8")):
            used.setdefault(name, set()).add(str(path.relative_to(REPO)))
    stray = {name: sorted(where) for name, where in used.items() if name not in runtime.VARIABLES}
    assert not stray, f"TORCH_TEST_* variables that tools/contract/runtime.py does not define: {stray}"
    unused = [name for name in runtime.VARIABLES if name.startswith("TORCH_TEST_") and name not in used
              and name not in _constants(REPO / "rules" / "private" / "contract.bzl").values()]
    assert not unused, f"defined in the contract, used nowhere: {unused}"
