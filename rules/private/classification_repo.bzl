"""Turns the checked-in classification JSON into a loadable `classification.bzl`.

Why a repository rule: a macro cannot read files, but it can `load()` a generated `.bzl`. The rule
reads the JSON through a label attribute, so Bazel re-runs it whenever the file changes, and it
validates every entry here, once, so a malformed entry fails the build with a message that names it.
The validator is contract.bzl's (twin of tools/contract/classification.py).
"""

load(":contract.bzl", "validate_classification")

_ROUTING_KEYS = ["label", "gpu_count", "vram_gb", "source", "torch", "without_gpus"]

def _strip(entry):
    # Keep what routing needs; evidence ("reasons") stays in the JSON for reviewers.
    return {k: entry[k] for k in _ROUTING_KEYS if k in entry}

def _strip_file(entry):
    kept = _strip(entry)
    if "tests" in entry:
        kept["tests"] = {key: _strip(test) for key, test in entry["tests"].items()}
    return kept

def _label_or_none(label):
    return str(label) if label else None

def _torch_classification_repo_impl(rctx):
    files = {}
    origin = "(none)"
    if rctx.attr.src:
        origin = str(rctx.attr.src)
        text = rctx.read(rctx.path(rctx.attr.src))
        data = json.decode(text, default = None)
        if data == None:
            fail("%s: not valid JSON (run `bazel run //tools:classify -- --update` to regenerate it)" % origin)
        error = validate_classification(data, origin)
        if error:
            fail(error)
        files = {path: _strip_file(entry) for path, entry in data["files"].items()}
    rctx.file("BUILD.bazel", "exports_files([\"classification.bzl\"])\n")
    rctx.file("classification.bzl", "\n".join([
        "\"\"\"Generated from %s by @rules_torch_test//rules:extensions.bzl. Do not edit.\"\"\"" % origin,
        "",
        "CLASSIFICATION_SOURCE = %r" % origin,
        "",
        "CLASSIFIED_FILES = %r" % files,
        "",
        "DEFAULT_PYTEST_CONFIG = %r" % _label_or_none(rctx.attr.pytest_config),
        "",
        "DEFAULT_PERF_BASELINES = %r" % _label_or_none(rctx.attr.perf_baselines),
        "",
    ]))

torch_classification_repo = repository_rule(
    implementation = _torch_classification_repo_impl,
    attrs = {
        "perf_baselines": attr.label(doc = "torch_py_test's default `perf_baselines`."),
        "pytest_config": attr.label(doc = "torch_py_test's default `pytest_config`."),
        "src": attr.label(allow_single_file = [".json"], doc = "The classification JSON file."),
    },
    doc = "Generates @torch_classification//:classification.bzl from a classification JSON file and the root module's torch_py_test defaults.",
)
