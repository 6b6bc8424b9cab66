"""Round 31: a file without tests whose import needs a GPU, and a warm run that never loads the analysis (corpus
tests/round31; each file run with pytest on CPU-only torch first)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tools.classify.merge import file_entry, merge
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, exact_keys

NEEDS = "tests/round31/test_import_needs_gpu.py"
GUARDED = "tests/round31/test_import_guarded.py"
UNKNOWN_KEYS = "tests/round31/test_unknown_keys.py"
DEVICE_MAPS = "tests/round31/test_device_maps.py"
HELPERS = "tests/round31/test_objects_helpers_change.py"
REPO_ROOT = Path(__file__).resolve().parents[3]


def _settle(tree: Path) -> None:
    """Date every file of tree a minute back: a file changed within a second of a run may change again unseen
    (runner.RACY_NS), so only settled files let the next run answer from the cache."""
    for p in tree.rglob("*"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def test_a_file_without_tests_whose_import_needs_a_gpu_is_gpu(corpus: Path) -> None:
    # before: no tests, so the file entry said `cpu`, and its target ran on a CPU runner where collecting it fails
    # ("Torch not compiled with CUDA enabled" at import)
    files = run(corpus, paths=["tests/round31"], cache_dir=None, workers=1).files
    needs = files[NEEDS]
    assert needs.tests == {}
    entry = file_entry(needs)
    assert (entry["label"], entry["gpu_count"]) == ("gpu", 1)
    assert entry["reasons"] == [
        f"{NEEDS}:1: no tests, but pytest imports the file to collect it and the import needs a GPU",
        f"{NEEDS}:6: .cuda() needs a CUDA device"]
    guarded = files[GUARDED]
    assert guarded.import_needs_gpu is None
    assert file_entry(guarded)["label"] == "cpu"
    # (what a worker process sends back carries it too)
    in_workers = run(corpus, paths=["tests/round31"], cache_dir=None, workers=2).files
    assert in_workers[NEEDS].import_needs_gpu == needs.import_needs_gpu
    assert in_workers[GUARDED].import_needs_gpu is None


def test_the_import_verdict_survives_the_cache_and_a_previous_entry(corpus: Path, tmp_path: Path) -> None:
    _settle(corpus)
    cold = run(corpus, paths=["tests/round31"], cache_dir=tmp_path / "cache", workers=1).files
    os.utime(corpus / GUARDED, (1_000_000_000, 1_000_000_000))  # not the whole tree's snapshot: per file
    warm = run(corpus, paths=["tests/round31"], cache_dir=tmp_path / "cache", workers=1)
    assert warm.cache_hits >= 1
    assert warm.files[NEEDS].import_needs_gpu == cold[NEEDS].import_needs_gpu is not None
    again = run(corpus, paths=["tests/round31"], cache_dir=tmp_path / "cache", workers=1)  # the snapshot
    assert again.files[NEEDS].import_needs_gpu == cold[NEEDS].import_needs_gpu
    old = {"files": {NEEDS: {"label": "cpu", "torch": True, "gpu_count": 0, "vram_gb": 0, "source": "static",
                             "tests": {}}}}
    assert merge(warm.files, old)["files"][NEEDS]["label"] == "gpu"


def test_a_warm_run_does_not_load_the_analysis(tmp_path: Path) -> None:
    # an unchanged tree is answered from the cache: the interpreter is not imported (half of a warm command's time)
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_a.py").write_text("import torch\n\n\ndef test_a():\n    assert torch.ones(1).sum() == 1\n")
    _settle(tree)  # (files changed within a second of a run are not trusted by the next one)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tools.classify.runner import run\n"
        f"r = run(Path({str(tree)!r}), cache_dir=Path({str(tmp_path / 'cache')!r}), workers=1)\n"
        "assert r.files['tests/test_a.py'].tests['test_a'].label == 'cpu'\n"
        "print('tools.classify.analyzer' in sys.modules, 'tools.classify.dataflow' in sys.modules)\n")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert [p.stdout.split() for p in runs] == [["True", "True"], ["False", "False"]]


def test_a_dict_filled_under_unknown_keys_keeps_what_was_stored(corpus: Path) -> None:
    # before: `d[key] = value` with a key the analysis cannot compute made the whole dict unknown, so every device read
    # from it was `unknown` (peft: 3,897 CPU tests, through the layer map of a KV cache); now the entry is kept under
    # that key, and any lookup, by a known key too, may select it
    tests = run(corpus, paths=[UNKNOWN_KEYS], cache_dir=None, workers=1).files[UNKNOWN_KEYS].tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_stored_under_an_unknown_key_then_looked_up_by_a_known_one": "gpu",
        "test_stored_under_an_unknown_key_then_got": "gpu", "test_filled_in_a_loop_with_cuda": "gpu",
        "test_filled_in_a_loop_with_cpu": "cpu", "test_empty_after_a_loop_that_did_not_run": "gpu",
        "test_the_values_of_a_dict_filled_in_a_loop": "gpu",
        "test_a_comprehension_over_a_range_of_unknown_length": "gpu"}
    assert tests["test_stored_under_an_unknown_key_then_looked_up_by_a_known_one"].reasons == (
        f"{UNKNOWN_KEYS}:15: torch.ones(device='cuda') needs a CUDA device",)
    assert exact_keys(DictV(((Const("a"), Const("cpu")),)))
    assert not exact_keys(DictV(((Const("a"), Const("cpu")), (UNRESOLVED, Const("cuda")))))


def test_the_devices_of_a_loaded_models_device_map_are_where_its_layers_are(corpus: Path) -> None:
    # `model.hf_device_map` of a model the analysis cannot see into: each value is where that module's weights already
    # are (a loading that put them on CUDA is a need where it is called), as `model.device` is; the layer map built
    # from it in a loop or a comprehension over a range of unknown length holds those devices (main: all `unknown`)
    tests = run(corpus, paths=[DEVICE_MAPS], cache_dir=None, workers=1).files[DEVICE_MAPS].tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_a_cache_follows_the_device_map": "cpu", "test_a_whole_model_on_one_device": "cpu",
        "test_a_model_without_a_device_map": "cpu", "test_the_device_of_the_whole_model": "cpu"}
    assert tests["test_the_device_of_the_whole_model"].reasons == (f"{DEVICE_MAPS}:33: no GPU use found",)


def test_an_object_a_helper_changes_in_place_is_seen_changed(corpus: Path) -> None:
    # before: `attach(m)` setting `m.extra` left the caller's `m` as it was, so `getattr(m, "extra", None)` took the
    # default and the CUDA use behind it was never reached (2 false CPUs), and `getattr(m, "device", "cuda")` after
    # `place(m, "cpu")` gave "cuda"; a present attribute whose value is unknown gave the default too (a false CPU)
    tests = run(corpus, paths=[HELPERS], cache_dir=None, workers=1).files[HELPERS].tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_an_attribute_a_helper_set": "gpu", "test_an_attribute_a_helper_set_by_keyword": "gpu",
        "test_a_device_a_helper_set": "cpu", "test_an_attribute_that_is_there_with_a_value_not_known": "unknown",
        "test_an_attribute_that_is_not_there": "cpu", "test_an_attribute_a_helper_set_on_a_nested_object": "gpu",
        "TestOnTheTestsObject::test_an_attribute_a_helper_set_on_self_model": "gpu"}
    assert tests["test_an_attribute_a_helper_set"].reasons == (f"{HELPERS}:32: .cuda() needs a CUDA device",)
