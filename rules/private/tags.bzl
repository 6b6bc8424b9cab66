"""Routing and tags for torch_py_test, computed in one place (vocabulary: docs/tags.md).

Pure functions over the classification dict, so the whole decision is visible in `bazel query`
output and testable without running anything.
"""

DEVICES = ["cpu", "gpu"]

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
            labels = {key: tests[key]["label"] for key in tests}
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
    tags = ["torch-label-source:%s" % s for s in sources if s != "unclassified"]
    if device == "cpu":
        tags.append("requires-torch-cpu" if part["torch"] else "no-torch")
        return sorted(tags)
    count = gpu_count if gpu_count != None else part["gpu_count"]
    if count < 1:
        fail("gpu_count must be >= 1 for a GPU test, got %r" % count)
    vram = _ceil(vram_gb if vram_gb != None else part["vram_gb"])
    tags += [
        "requires-gpu",
        "gpu-count:%d" % count,
        "gpu-vram-gb:%d" % vram,
        "resources:gpu:%d" % count,
    ]
    if part["unclassified"]:
        tags.append("torch-unclassified")
    if cuda_min:
        tags.append("cuda-min:%s" % cuda_min)
    if gpu_model:
        tags.append("gpu-model:%s" % gpu_model)
    if gpu_interconnect:
        tags.append("gpu-interconnect:%s" % gpu_interconnect)
    return sorted(tags)

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
