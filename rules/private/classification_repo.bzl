"""Turns the checked-in classification JSON into a loadable `classification.bzl`.

Why a repository rule: a macro cannot read files, but it can `load()` a generated `.bzl`. The rule
reads the JSON through a label attribute, so Bazel re-runs it whenever the file changes, and it
validates every entry here, once, so a malformed entry fails the build with a message that names it.
The Python twin of `validate_classification` is tools/classify/classification_file.py.
"""

_FILE_LABELS = ["cpu", "gpu", "mixed", "unknown"]
_TEST_LABELS = ["cpu", "gpu", "unknown"]
_SOURCES = ["static", "runtime", "manual"]
_TOP_KEYS = ["version", "generated_by", "files"]
_FILE_KEYS = ["label", "torch", "gpu_count", "vram_gb", "source", "tests", "reasons"]
_TEST_KEYS = ["label", "gpu_count", "vram_gb", "source", "reasons"]

# C0 control characters and DEL (octal escapes): never in a path or a test key (they would break node ids and tags).
_CONTROL = [
    "\000",
    "\001",
    "\002",
    "\003",
    "\004",
    "\005",
    "\006",
    "\007",
    "\010",
    "\011",
    "\012",
    "\013",
    "\014",
    "\015",
    "\016",
    "\017",
    "\020",
    "\021",
    "\022",
    "\023",
    "\024",
    "\025",
    "\026",
    "\027",
    "\030",
    "\031",
    "\032",
    "\033",
    "\034",
    "\035",
    "\036",
    "\037",
    "\177",
]

def _has_control(s):
    for c in _CONTROL:
        if c in s:
            return True
    return False

def _unknown_key(where, entry, allowed):
    unknown = sorted([k for k in entry.keys() if k not in allowed])
    if unknown:
        return "%s: unknown key %r (allowed: %s)" % (where, unknown[0], ", ".join(allowed))
    return None

def _canonical_path(path):
    """Mirrors classification_file.canonical_path: `package/src` exactly as Bazel spells it."""
    if not path or _has_control(path) or "\\" in path or path.startswith("/") or path.endswith("/"):
        return False
    for part in path.split("/"):
        if part in ["", ".", ".."]:
            return False
    return True

def _check_number(where, entry, key, integer):
    if key not in entry:
        return None
    value = entry[key]
    ok = type(value) == "int" or (not integer and type(value) == "float")
    if not ok:
        return "%s: '%s' must be %s, got %r" % (where, key, "an integer" if integer else "a number", value)
    if value < 0:
        return "%s: '%s' must be >= 0, got %r" % (where, key, value)
    return None

def _check_entry(where, entry, labels, keys):
    if type(entry) != "dict":
        return "%s: entry must be an object, got %s" % (where, type(entry))
    error = _unknown_key(where, entry, keys)
    if error:
        return error
    if entry.get("label") not in labels:
        return "%s: 'label' must be one of %s; got %r" % (where, ", ".join(labels), entry.get("label"))
    if entry.get("source", "static") not in _SOURCES:
        return "%s: 'source' must be one of %s; got %r" % (where, ", ".join(_SOURCES), entry.get("source"))
    for key, integer in [("gpu_count", True), ("vram_gb", False)]:
        error = _check_number(where, entry, key, integer)
        if error:
            return error
    reasons = entry.get("reasons", [])
    if type(reasons) != "list" or [r for r in reasons if type(r) != "string"]:
        return "%s: 'reasons' must be a list of strings" % where
    return None

def validate_classification(data, origin):
    """Returns an error message naming the first bad entry, or None when `data` is valid.

    Args:
      data: the decoded JSON.
      origin: file name used in messages.

    Returns:
      None, or a string naming the first invalid entry and what is wrong with it.
    """
    if type(data) != "dict":
        return "%s: top level must be an object" % origin
    error = _unknown_key(origin, data, _TOP_KEYS)
    if error:
        return error
    if data.get("version") != 1:
        return "%s: unsupported 'version' %r (these rules read 1)" % (origin, data.get("version"))
    files = data.get("files")
    if type(files) != "dict":
        return "%s: 'files' must be an object" % origin
    for path in sorted(files.keys()):
        entry = files[path]
        where = "%s: files[%r]" % (origin, path)
        if not _canonical_path(path):
            return "%s: key must be a canonical workspace-relative POSIX path (no './', '//', '..', trailing '/', backslash or control character)" % where
        error = _check_entry(where, entry, _FILE_LABELS, _FILE_KEYS)
        if error:
            return error
        if type(entry.get("torch", True)) != "bool":
            return "%s: 'torch' must be true or false" % where
        tests = entry.get("tests", {})
        if type(tests) != "dict":
            return "%s: 'tests' must be an object" % where
        for key in sorted(tests.keys()):
            if not key or _has_control(key):
                return "%s.tests[%r]: a test key must be a non-empty node id without control characters" % (where, key)
            error = _check_entry("%s.tests[%r]" % (where, key), tests[key], _TEST_LABELS, _TEST_KEYS)
            if error:
                return error
    return None

_ROUTING_KEYS = ["label", "gpu_count", "vram_gb", "source", "torch"]

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
