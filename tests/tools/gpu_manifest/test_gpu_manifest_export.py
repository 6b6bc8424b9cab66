"""export_gpu_manifest: query parsing, tag reading, history, schema validation, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tools.gpu_manifest import __main__ as cli
from tools.gpu_manifest import export, history, query, schema

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Query output of another repository: the team kit's samples next to this checkout, where present.
SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "bazel-offline" / "samples"
GPU_LABELS = [
    "//examples/torch_gpu:test_amp_h100",
    "//examples/torch_gpu:test_cuda_ops",
    "//examples/torch_gpu:test_flaky_kernel",
    "//examples/torch_gpu:test_nccl_allreduce",
    "//examples/torch_gpu:test_two_gpu",
    "//examples/torch_gpu:test_unclassified",
]


def _manifest(text: str, fmt: str, filters: str = "requires-gpu", testlogs: Path | None = None) -> schema.Manifest:
    return export.build_manifest(query.parse(text, fmt), export.TagFilter.parse(filters), testlogs, {})


# ---------------------------------------------------------------- query parsing

def test_xml_and_streamed_jsonproto_agree(examples_xml: str, examples_jsonl: str) -> None:
    from_xml = query.parse_xml(examples_xml)
    from_json = query.parse_streamed_jsonproto(examples_jsonl)
    assert from_xml == from_json
    amp = next(t for t in from_xml if t.label.endswith("test_amp_h100"))
    assert (amp.size, amp.timeout, amp.shard_count, amp.kind) == ("large", "long", 2, "py_test")
    assert "cuda-min:12.1" in amp.tags


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="bazel-offline samples not present")
@pytest.mark.parametrize("name,fmt", [("query_gpu_tests.xml", "xml"),
                                      ("query_gpu_tests.streamed_jsonproto.jsonl", "streamed_jsonproto"),
                                      ("cquery_gpu_tests.jsonproto.json", "jsonproto")])
def test_real_bazel_samples_parse(name: str, fmt: str) -> None:
    text = (SAMPLES / name).read_text(encoding="utf-8")
    assert query.guess_format(text) == fmt
    [target] = query.parse(text, fmt, name)
    assert target.label == "//tests:gpu_smoke_test"
    assert "requires-gpu" in target.tags and target.size == "medium" and target.timeout is None


def test_malformed_xml_names_line() -> None:
    with pytest.raises(query.QueryParseError, match=r"q.xml: malformed XML at line 3"):
        query.parse_xml('<query version="2">\n<rule class="py_test" name="//a:b">\n</query>', "q.xml")


def test_xml_bad_int_names_rule_and_attribute() -> None:
    text = '<query><rule class="py_test" name="//a:b"><int name="shard_count" value="x"/></rule></query>'
    with pytest.raises(query.QueryParseError, match=r"<rule> #0 \(//a:b\).*shard_count.*'x'"):
        query.parse_xml(text)


def test_xml_rule_without_name() -> None:
    with pytest.raises(query.QueryParseError, match=r"<rule> #1: missing 'name'"):
        query.parse_xml('<query><source-file name="//a:x"/><rule class="py_test"/></query>')


def test_malformed_json_names_line(examples_jsonl: str) -> None:
    lines = examples_jsonl.splitlines()
    broken = "\n".join([lines[0], lines[1][:40], *lines[2:]])
    with pytest.raises(query.QueryParseError, match=r"out.jsonl: line 2: invalid JSON"):
        query.parse_streamed_jsonproto(broken, "out.jsonl")


def test_json_wrong_attribute_type_names_field() -> None:
    line = json.dumps({"type": "RULE", "rule": {"name": "//a:b", "ruleClass": "py_test", "attribute": [
        {"name": "tags", "type": "STRING_LIST", "stringListValue": "requires-gpu"}]}})
    with pytest.raises(query.QueryParseError, match=r"line 1 \(//a:b\): attribute 'tags' must be a list"):
        query.parse_streamed_jsonproto(line)


# ---------------------------------------------------------------- tags → manifest

def test_manifest_entries_from_tags(examples_xml: str) -> None:
    manifest = _manifest(examples_xml, "xml")
    by_label = {t.label: t for t in manifest.tests}
    assert sorted(by_label) == GPU_LABELS  # CPU target dropped, sorted, each once
    two = by_label["//examples/torch_gpu:test_two_gpu"]
    assert (two.gpu_count, two.vram_gb, two.interconnect, two.exclusive) == (2, 4, "nvlink", False)
    assert two.command == "bazel test --config=gpu //examples/torch_gpu:test_two_gpu"
    amp = by_label["//examples/torch_gpu:test_amp_h100"]
    assert (amp.cuda_min, amp.gpu_model, amp.timeout_s, amp.shard_count) == ("12.1", "h100", 900, 2)
    assert (amp.duration_source, amp.estimated_duration_s) == ("size", 2 * history.SIZE_ESTIMATE_S["large"])
    nccl = by_label["//examples/torch_gpu:test_nccl_allreduce"]
    assert nccl.exclusive and nccl.flaky and nccl.gpu_count == 4
    assert by_label["//examples/torch_gpu:test_cuda_ops"].timeout_s == 60  # small → short


def test_tag_filters_follow_bazel_semantics(examples_xml: str) -> None:
    labels = [t.label for t in _manifest(examples_xml, "xml", "requires-gpu,-flaky").tests]
    assert "//examples/torch_gpu:test_flaky_kernel" not in labels and len(labels) == 5
    only = [t.label for t in _manifest(examples_xml, "xml", "torch-unclassified").tests]
    assert only == ["//examples/torch_gpu:test_unclassified"]
    f = export.TagFilter.parse("a,-b")
    assert f.accepts(["a"]) and not f.accepts(["a", "b"]) and not f.accepts(["c"])


def _target(*tags: str) -> query.QueryTarget:
    return query.QueryTarget(label="//x:t", kind="py_test", tags=("requires-gpu", *tags))


@pytest.mark.parametrize("tags,message", [
    (("gpu-count:2", "resources:gpu:1"), r"//x:t: tags gpu-count:2 and resources:gpu:1 disagree"),
    (("gpu-count:0",), r"//x:t: tag 'gpu-count:0': expected an integer >= 1"),
    (("gpu-vram-gb:lots",), r"//x:t: tag 'gpu-vram-gb:lots'"),
    (("cuda-min:twelve",), r"//x:t: tag 'cuda-min:twelve'"),
    (("gpu-count:1", "gpu-count:2"), r"conflicting tags gpu-count:1 and gpu-count:2"),
])
def test_bad_tags_name_label_and_tag(tags: tuple[str, ...], message: str) -> None:
    with pytest.raises(export.ExportError, match=message):
        export.to_manifest_test(_target(*tags), None)


def test_resources_tag_alone_gives_count() -> None:
    assert export.to_manifest_test(_target("resources:gpu:4"), None).gpu_count == 4


# ---------------------------------------------------------------- history

def _junit(path: Path, seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<?xml version="1.0"?>\n<testsuites><testsuite name="t" tests="1" time="{seconds}">'
                    f'<testcase name="c" time="{seconds}"/></testsuite></testsuites>\n')


def test_history_durations(tmp_path: Path, examples_xml: str) -> None:
    logs = tmp_path / "bazel-testlogs"
    _junit(logs / "examples/torch_gpu/test_two_gpu/test.xml", 42.5)
    _junit(logs / "examples/torch_gpu/test_amp_h100/shard_1_of_2/test.xml", 10)
    _junit(logs / "examples/torch_gpu/test_amp_h100/shard_2_of_2/test.xml", 12)
    (logs / "examples/torch_gpu/test_cuda_ops").mkdir(parents=True)
    (logs / "examples/torch_gpu/test_cuda_ops/test.xml").write_text("<testsuites><broken")
    by_label = {t.label: t for t in _manifest(examples_xml, "xml", testlogs=logs).tests}
    assert (by_label["//examples/torch_gpu:test_two_gpu"].estimated_duration_s, by_label[
        "//examples/torch_gpu:test_two_gpu"].duration_source) == (42.5, "history")
    assert by_label["//examples/torch_gpu:test_amp_h100"].estimated_duration_s == 22  # shards summed
    assert by_label["//examples/torch_gpu:test_cuda_ops"].duration_source == "size"  # unreadable → size


def test_history_gpu_utilisation(tmp_path: Path, examples_xml: str) -> None:
    logs = tmp_path / "bazel-testlogs"

    def util(path: str, means: object) -> None:
        target = logs / path / "test.outputs"
        target.mkdir(parents=True, exist_ok=True)
        (target / "torch-gpu-util.json").write_text(json.dumps({"version": 1, "mean_util": means}))

    util("examples/torch_gpu/test_two_gpu", [0.12, 0.31])
    util("examples/torch_gpu/test_amp_h100/shard_1_of_2", [0.2])
    util("examples/torch_gpu/test_amp_h100/shard_2_of_2", [0.45])
    util("examples/torch_gpu/test_cuda_ops", [1.7])  # not a utilisation: ignored
    by_label = {t.label: t for t in _manifest(examples_xml, "xml", testlogs=logs).tests}
    assert by_label["//examples/torch_gpu:test_two_gpu"].gpu_util == 0.31  # busiest GPU
    assert by_label["//examples/torch_gpu:test_amp_h100"].gpu_util == 0.45  # busiest shard
    assert by_label["//examples/torch_gpu:test_cuda_ops"].gpu_util is None
    assert by_label["//examples/torch_gpu:test_flaky_kernel"].gpu_util is None  # never measured
    assert all(t.gpu_util is None for t in _manifest(examples_xml, "xml").tests)


def test_history_ignores_runs_where_every_case_skipped(tmp_path: Path, examples_xml: str) -> None:
    # A GPU target run on a CPU machine skips everything in ~0 s: that is no duration estimate.
    logs = tmp_path / "bazel-testlogs"
    path = logs / "examples/torch_gpu/test_two_gpu/test.xml"
    path.parent.mkdir(parents=True)
    path.write_text('<testsuites><testsuite name="t" tests="1" time="0.01">'
                    '<testcase name="c" time="0.0"><skipped message="needs 2 CUDA GPUs"/></testcase>'
                    "</testsuite></testsuites>")
    by_label = {t.label: t for t in _manifest(examples_xml, "xml", testlogs=logs).tests}
    assert by_label["//examples/torch_gpu:test_two_gpu"].duration_source == "size"


def test_history_label_paths() -> None:
    assert history.label_dir(Path("L"), "@repo//a/b:c") == Path("L/external/repo/a/b/c")
    assert history.label_dir(Path("L"), "//:top") == Path("L/top")


# ---------------------------------------------------------------- schema

def _doc(examples_xml: str) -> dict:
    return schema.to_dict(_manifest(examples_xml, "xml"))


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["tests"][3].__setitem__("gpu_count", -2), "tests[3].gpu_count: expected int in [1, 4096], got -2"),
    (lambda d: d["tests"][0].__setitem__("gpu_count", "2"), "tests[0].gpu_count: expected int in [1, 4096], got '2'"),
    (lambda d: d["tests"][1].__setitem__("vram_gb", "lots"), "tests[1].vram_gb: expected a finite number in [0, "),
    (lambda d: d["tests"][2].__setitem__("exclusive", "yes"), "tests[2].exclusive: expected bool, got 'yes'"),
    (lambda d: d["tests"][0].__setitem__("cuda_min", 12.4), "tests[0].cuda_min: expected string matching"),
    (lambda d: d["tests"][0].pop("timeout_s"), "tests[0].timeout_s: required field missing"),
    (lambda d: d["tests"][0].__setitem__("gpus", 2), "tests[0].gpus: unknown field"),
    (lambda d: d["tests"][4].__setitem__("label", d["tests"][0]["label"]), "tests[4].label: duplicate of tests[0]"),
    (lambda d: d.__setitem__("schema_version", 2), "schema_version: expected 1, got 2"),
])
def test_hand_edited_manifest_errors_name_the_field(examples_xml: str, tmp_path: Path, edit, message) -> None:
    doc = _doc(examples_xml)
    edit(doc)
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(schema.ManifestError) as err:
        schema.read(path)
    assert message in str(err.value)


def test_roundtrip_yaml_and_json(examples_xml: str, tmp_path: Path) -> None:
    manifest = _manifest(examples_xml, "xml")
    for name in ("m.yaml", "m.json"):
        schema.write(manifest, tmp_path / name)
        assert schema.read(tmp_path / name) == manifest


def test_invalid_manifest_is_never_written(examples_xml: str, tmp_path: Path) -> None:
    import dataclasses

    manifest = _manifest(examples_xml, "xml")
    bad = dataclasses.replace(manifest, tests=(dataclasses.replace(manifest.tests[0], gpu_count=0),))
    path = tmp_path / "m.yaml"
    path.write_text("old contents\n")
    with pytest.raises(schema.ManifestError, match=r"tests\[0\].gpu_count"):
        schema.write(bad, path)
    assert path.read_text() == "old contents\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.yaml"]  # no temp file left behind


# ---------------------------------------------------------------- CLI

def test_cli_runs_bazel_query_in_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           examples_xml: str) -> None:
    calls = []

    def runner(argv, cwd):
        calls.append((list(argv), cwd))
        return examples_xml

    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    rc = cli.main(["--target-pattern", "//examples/...", "--output", "out/gpu.json"], runner=runner)
    assert rc == 0
    [(argv, cwd)] = calls
    assert cwd == tmp_path
    assert argv[:2] == ["bazel", "query"] and "--output=xml" in argv
    assert argv[2] == 'attr(tags, "[\\[ ]requires-gpu[,\\]]", tests(//examples/...))'
    doc = json.loads((tmp_path / "out/gpu.json").read_text())
    assert [t["label"] for t in doc["tests"]] == GPU_LABELS


def test_cli_reads_query_output_and_reports_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.yaml"
    assert cli.main(["--query-output", str(FIXTURES / "query_gpu_examples.streamed_jsonproto.jsonl"),
                     "--output", str(out), "--test-tag-filters", "requires-gpu,-exclusive"]) == 0
    labels = [t.label for t in schema.read(out).tests]
    assert "//examples/torch_gpu:test_nccl_allreduce" not in labels
    bad = tmp_path / "bad.xml"
    bad.write_text("<query><rule")
    assert cli.main(["--query-output", str(bad), "--output", str(tmp_path / "x.yaml")]) == 1
    assert "malformed XML at line 1" in capsys.readouterr().err
    assert not (tmp_path / "x.yaml").exists()
