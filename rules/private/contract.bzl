"""The pipeline's contract, Starlark side: the twin of tools/contract (classification.py, runtime.py).

The classification file's validator (classification_repo.bzl runs it at loading time) and the environment
variables torch_py_test sets for the runner and the GPU wrapper. The tag vocabulary's twin is tags.bzl.
tests/rules/contract_cases.json feeds the same cases to both sides (tests/rules/BUILD.bazel, and
tests/tools/contract/test_contract_parity.py for Python): change both, and the parity test tells you what you missed.
"""

SCHEMA_VERSION = 1

# Environment variables (tools/contract/runtime.py; docs/tags.md, "Environment variables").
ENV_NUM_THREADS = "TORCH_TEST_NUM_THREADS"
ENV_PERF_BASELINES = "TORCH_TEST_PERF_BASELINES"
ENV_ROUTING = "TORCH_TEST_ROUTING"
ENV_PART = "TORCH_TEST_PART"
ENV_GPU_COUNT = "TORCH_TEST_GPU_COUNT"
ENV_VRAM_GB = "TORCH_TEST_VRAM_GB"

_FILE_LABELS = ["cpu", "gpu", "mixed", "unknown"]
_TEST_LABELS = ["cpu", "gpu", "unknown"]
_SOURCES = ["static", "runtime", "manual"]
_TOP_KEYS = ["version", "generated_by", "files"]
_FILE_KEYS = ["label", "torch", "gpu_count", "vram_gb", "source", "tests", "reasons"]
_TEST_KEYS = ["label", "gpu_count", "vram_gb", "source", "reasons", "without_gpus"]

# A test key naming another case on a machine without GPUs: that case's label (only ever "cpu").
WITHOUT_GPUS = "without_gpus"

# Its label in the runner's routing (runtime.ROUTE_CPU_WITHOUT_GPUS): gpu where the test sees a GPU, else cpu.
ROUTE_CPU_WITHOUT_GPUS = "gpu; cpu without gpus"

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

def canonical_path(path):
    """A workspace-relative POSIX path as Bazel spells it (`package/src`); twin of classification.canonical_path.

    Args:
      path: a file key of the classification file.

    Returns:
      True when `path` has no `./`, `//`, `..`, `/` at either end, backslash or control character.
    """
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

def test_key_problem(path, key):
    """What is wrong with a test key of file `path`; twin of classification.test_key_problem.

    Args:
      path: the file key.
      key: the test key (the node id after `path::`).

    Returns:
      None, or why the key can never match a collected test.
    """
    if not key or _has_control(key):
        return "a test key must be a non-empty node id without control characters"
    if "::" in key and key.startswith(path):
        return "key must not repeat the file path"
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
    if type(data.get("generated_by", "")) != "string":
        return "%s: 'generated_by' must be a string" % origin
    if type(data.get("version")) != "int" or data["version"] != SCHEMA_VERSION:
        return "%s: unsupported 'version' %r (these rules read %d)" % (origin, data.get("version"), SCHEMA_VERSION)
    files = data.get("files")
    if type(files) != "dict":
        return "%s: 'files' must be an object" % origin
    for path in sorted(files.keys()):
        entry = files[path]
        where = "%s: files[%r]" % (origin, path)
        if not canonical_path(path):
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
            problem = test_key_problem(path, key)
            if problem:
                return "%s.tests[%r]: %s" % (where, key, problem)
            test = tests[key]
            error = _check_entry("%s.tests[%r]" % (where, key), test, _TEST_LABELS, _TEST_KEYS)
            if error:
                return error
            if WITHOUT_GPUS in test and (test[WITHOUT_GPUS] != "cpu" or test["label"] == "cpu"):
                return "%s.tests[%r]: 'without_gpus' must be 'cpu', on a gpu or unknown test; got %r on %r" % (
                    where,
                    key,
                    test[WITHOUT_GPUS],
                    test["label"],
                )
    return None
