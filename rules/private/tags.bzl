"""Routing and tags for torch_py_test, computed in one place (vocabulary: docs/tags.md).

Pure functions over the classification dict, so the whole decision is visible in `bazel query`
output and testable without running anything. The tag vocabulary is the twin of tools/contract/tags.py:
`part_tags` formats and `parse_tags` reads the same tags, fed the same cases by the parity test
(tests/rules/contract_cases.json).
"""

load(":contract.bzl", "ROUTE_CPU_WITHOUT_GPUS", "WITHOUT_GPUS")

DEVICES = ["cpu", "gpu"]

REQUIRES_TORCH_CPU = "requires-torch-cpu"
NO_TORCH = "no-torch"
REQUIRES_GPU = "requires-gpu"
UNCLASSIFIED = "torch-unclassified"
EXCLUSIVE = "exclusive"
GPU_COUNT = "gpu-count"
VRAM_GB = "gpu-vram-gb"
RESOURCES_GPU = "resources:gpu"
LABEL_SOURCE = "torch-label-source"
CUDA_MIN = "cuda-min"
GPU_MODEL = "gpu-model"
GPU_INTERCONNECT = "gpu-interconnect"

FLAGS = [REQUIRES_TORCH_CPU, NO_TORCH, REQUIRES_GPU, UNCLASSIFIED, EXCLUSIVE]
INT_KEYS = [GPU_COUNT, VRAM_GB, RESOURCES_GPU]
SINGLE_KEYS = INT_KEYS + [CUDA_MIN, GPU_MODEL, GPU_INTERCONNECT]  # one value per target
VALUE_KEYS = SINGLE_KEYS + [LABEL_SOURCE]  # a target split from files of several sources has several
_MINIMUM = {GPU_COUNT: 1, RESOURCES_GPU: 1, VRAM_GB: 0}
_INT_WANT = "(ASCII digits, no sign, spaces, '_' or leading zeros)"
_DIGITS = "0123456789"

def _ceil(value):
    whole = int(value)
    return whole if whole == value else whole + 1

def _is_test_file(path):
    base = path.split("/")[-1]
    return base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py"))

def test_files(paths):
    """The sources pytest should collect (pytest's default `python_files`); the rest are helpers."""
    return [p for p in paths if _is_test_file(p)]

def _new_part():
    return {
        "gpu_count": 0,
        "paths": [],
        "routing": {},
        "sources": {},
        "torch": False,
        "unclassified": False,
        "vram_gb": 0,
    }

def _add(part, path, source, torch = True, gpu_count = 0, vram_gb = 0, unclassified = False):
    if path not in part["paths"]:
        part["paths"].append(path)
    part["sources"][source] = True
    part["torch"] = part["torch"] or torch
    part["gpu_count"] = max(part["gpu_count"], gpu_count)
    part["vram_gb"] = max(part["vram_gb"], vram_gb)
    part["unclassified"] = part["unclassified"] or unclassified

def _routing_label(test):
    # A key that names another case on a machine without GPUs is decided where the test runs.
    if test.get(WITHOUT_GPUS) == "cpu":
        return ROUTE_CPU_WITHOUT_GPUS
    return test["label"]

def route(paths, classified, device = None):
    """Splits the test files of one target into a CPU part and a GPU part.

    Args:
      paths: workspace-relative paths of the target's test files.
      classified: the classification dict (path -> file entry, docs/classification.md).
      device: "cpu" or "gpu" to override the file, or None.

    Returns:
      A dict with keys "cpu" and "gpu", each None or a part dict: paths, routing (path -> {test key
      -> label} for files split between both parts), gpu_count, vram_gb, torch, unclassified,
      sources (who set the labels).
    """
    if device != None and device not in DEVICES:
        fail("device must be one of %s, got %r" % (DEVICES, device))
    cpu = _new_part()
    gpu = _new_part()
    for path in paths:
        entry = classified.get(path)
        torch = entry.get("torch", True) if entry else True
        if device == "cpu":
            _add(cpu, path, "attribute", torch = torch)
        elif device == "gpu":
            # Forced onto a GPU: at least one, even when the file was classified cpu (gpu_count 0).
            _add(gpu, path, "attribute", gpu_count = max(1, entry.get("gpu_count", 1)) if entry else 1, vram_gb = entry.get("vram_gb", 0) if entry else 0)
        elif entry == None:
            _add(gpu, path, "unclassified", gpu_count = 1, unclassified = True)
        elif entry["label"] == "cpu":
            _add(cpu, path, entry.get("source", "static"), torch = torch)
        elif entry["label"] in ["gpu", "unknown"]:
            _add(
                gpu,
                path,
                entry.get("source", "static"),
                gpu_count = max(1, entry.get("gpu_count", 1)),
                vram_gb = entry.get("vram_gb", 0),
                unclassified = entry["label"] == "unknown",
            )
        else:  # mixed: the CPU part runs the cpu tests, the GPU part everything else.
            tests = entry.get("tests", {})
            labels = {key: _routing_label(tests[key]) for key in tests}
            _add(cpu, path, entry.get("source", "static"), torch = torch)
            gpu_tests = [tests[k] for k in tests if tests[k]["label"] != "cpu"]
            _add(
                gpu,
                path,
                entry.get("source", "static"),
                gpu_count = max([1] + [t.get("gpu_count", 1) for t in gpu_tests]),
                vram_gb = max([entry.get("vram_gb", 0)] + [t.get("vram_gb", 0) for t in gpu_tests]),
                unclassified = len([t for t in gpu_tests if t["label"] == "unknown"]) > 0,
            )
            cpu["routing"][path] = labels
            gpu["routing"][path] = labels
    return {
        "cpu": cpu if cpu["paths"] else None,
        "gpu": gpu if gpu["paths"] else None,
    }

def tag(key, value):
    """The one spelling of a valued tag, `key:value`.

    Args:
      key: a valued tag's key, e.g. GPU_COUNT.
      value: its value (formatted with %s).

    Returns:
      The tag string.
    """
    return "%s:%s" % (key, value)

def part_tags(device, part, gpu_count = None, vram_gb = None, cuda_min = None, gpu_model = None, gpu_interconnect = None):
    """The tags of one part (see docs/tags.md); attribute values override the classification.

    Args:
      device: "cpu" or "gpu".
      part: a part dict from `route`.
      gpu_count: override of the GPU count, or None.
      vram_gb: override of the GiB of GPU memory per GPU, or None.
      cuda_min: minimum CUDA version string, or None.
      gpu_model: required GPU model, or None.
      gpu_interconnect: required interconnect, or None.

    Returns:
      A sorted list of tags.
    """
    sources = sorted(part["sources"].keys())
    tags = [tag(LABEL_SOURCE, s) for s in sources if s != "unclassified"]
    if device == "cpu":
        tags.append(REQUIRES_TORCH_CPU if part["torch"] else NO_TORCH)
        return sorted(tags)
    count = gpu_count if gpu_count != None else part["gpu_count"]
    if count < 1:
        fail("gpu_count must be >= 1 for a GPU test, got %r" % count)
    vram = _ceil(vram_gb if vram_gb != None else part["vram_gb"])
    tags += [
        REQUIRES_GPU,
        tag(GPU_COUNT, count),
        tag(VRAM_GB, vram),
        tag(RESOURCES_GPU, count),
    ]
    if part["unclassified"]:
        tags.append(UNCLASSIFIED)
    for key, value in [(CUDA_MIN, cuda_min), (GPU_MODEL, gpu_model), (GPU_INTERCONNECT, gpu_interconnect)]:
        if value:
            tags.append(tag(key, value))
    return sorted(tags)

def _split(text):
    if text.startswith(RESOURCES_GPU + ":"):
        return (RESOURCES_GPU, text[len(RESOURCES_GPU) + 1:])
    key, sep, value = text.partition(":")
    return (key, value) if sep and key in VALUE_KEYS else None

def _digits(text):
    return bool(text) and not [c for c in text.elems() if c not in _DIGITS]

def _value_problem(key, value):
    if key in INT_KEYS:
        if not _digits(value) or (len(value) > 1 and value[0] == "0") or int(value) < _MINIMUM[key]:
            return "tag %r: expected an integer >= %d %s" % (tag(key, value), _MINIMUM[key], _INT_WANT)
    elif key == CUDA_MIN:
        parts = value.split(".")
        if len(parts) != 2 or not _digits(parts[0]) or not _digits(parts[1]):
            return "tag %r: expected MAJOR.MINOR like 12.4" % tag(key, value)
    return None

def parse_tags(tags):
    """Reads a target's tags; twin of tools/contract/tags.py's `parse`, with the same problems.

    Args:
      tags: the target's tags.

    Returns:
      A dict: "values" (requires_gpu, exclusive, gpu_count, vram_gb, resources_gpu, cuda_min, gpu_model,
      gpu_interconnect; only those set) and "error" (the first problem, or None).
    """
    seen = {}
    for text in tags:
        pair = _split(text)
        if pair == None:
            continue
        key, value = pair
        problem = _value_problem(key, value)
        if problem:
            return {"error": problem, "values": {}}
        if key in SINGLE_KEYS and key in seen and seen[key] != value:
            return {"error": "conflicting tags %s:%s and %s:%s" % (key, seen[key], key, value), "values": {}}
        seen[key] = value
    count = seen.get(GPU_COUNT)
    resources = seen.get(RESOURCES_GPU)
    if count != None and resources != None and count != resources:
        return {
            "error": "tags %s:%s and %s:%s disagree; Bazel would admit the test with the wrong GPU count" % (GPU_COUNT, count, RESOURCES_GPU, resources),
            "values": {},
        }
    values = {}
    if REQUIRES_GPU in tags:
        values["requires_gpu"] = True
    if EXCLUSIVE in tags:
        values["exclusive"] = True
    for key, name in [(GPU_COUNT, "gpu_count"), (VRAM_GB, "vram_gb"), (RESOURCES_GPU, "resources_gpu")]:
        if key in seen:
            values[name] = int(seen[key])
    for key, name in [(CUDA_MIN, "cuda_min"), (GPU_MODEL, "gpu_model"), (GPU_INTERCONNECT, "gpu_interconnect")]:
        if seen.get(key):
            values[name] = seen[key]
    return {"error": None, "values": values}

def cpu_threads(tags):
    """Threads a test may use: N from Bazel's `cpu:N` tag (the CPUs Bazel reserves), else 1.

    Args:
      tags: the target's tags.

    Returns:
      The thread count, an int >= 1.
    """
    for tag in tags:
        if tag.startswith("cpu:"):
            return int(tag[len("cpu:"):])
    return 1
