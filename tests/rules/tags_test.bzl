"""Unit tests of rules/private/tags.bzl: how torch_py_test routes files and tags its targets.

Without these, routing was tested only through a live `bazel query` of the example suites.
"""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# buildifier: disable=bzl-visibility (tests of the private helpers)
load("//rules/private:tags.bzl", "cpu_threads", "parse_tags", "part_tags", "route", "test_files")

_CLASSIFIED = {
    "p/test_cpu.py": {"label": "cpu", "source": "static", "torch": True},
    "p/test_gpu.py": {"gpu_count": 2, "label": "gpu", "source": "runtime", "vram_gb": 3.5},
    "p/test_mixed.py": {
        "label": "mixed",
        "source": "static",
        "tests": {
            "test_a": {"label": "cpu"},
            "test_b": {"gpu_count": 1, "label": "gpu", "vram_gb": 2},
            "test_c": {"label": "unknown"},
        },
        "vram_gb": 1,
    },
    "p/test_positional.py": {
        "gpu_count": 1,
        "label": "mixed",
        "source": "static",
        "tests": {
            "test_ones[device0]": {"gpu_count": 1, "label": "gpu", "without_gpus": "cpu"},
            "test_ones[device1]": {"gpu_count": 1, "label": "gpu"},
        },
    },
    "p/test_plain.py": {"label": "cpu", "source": "manual", "torch": False},
    "p/test_unknown.py": {"label": "unknown", "source": "static"},
}

def _test_files_impl(ctx):
    env = unittest.begin(ctx)
    asserts.equals(
        env,
        ["p/test_a.py", "p/b_test.py"],
        test_files(["p/test_a.py", "p/helpers.py", "p/b_test.py", "p/test_data.json", "p/conftest.py"]),
    )
    return unittest.end(env)

test_files_test = unittest.make(_test_files_impl)

def _route_cpu_gpu_impl(ctx):
    env = unittest.begin(ctx)
    parts = route(["p/test_cpu.py"], _CLASSIFIED)
    asserts.equals(env, None, parts["gpu"])
    asserts.equals(env, ["requires-torch-cpu", "torch-label-source:static"], part_tags("cpu", parts["cpu"]))

    parts = route(["p/test_plain.py"], _CLASSIFIED)
    asserts.equals(env, ["no-torch", "torch-label-source:manual"], part_tags("cpu", parts["cpu"]))

    parts = route(["p/test_gpu.py"], _CLASSIFIED)
    asserts.equals(env, None, parts["cpu"])
    asserts.equals(
        env,
        ["gpu-count:2", "gpu-vram-gb:4", "requires-gpu", "resources:gpu:2", "torch-label-source:runtime"],
        part_tags("gpu", parts["gpu"]),
        "VRAM rounds up to whole GiB",
    )
    return unittest.end(env)

route_cpu_gpu_test = unittest.make(_route_cpu_gpu_impl)

def _route_unclassified_impl(ctx):
    env = unittest.begin(ctx)
    parts = route(["p/test_new.py"], _CLASSIFIED)
    asserts.equals(env, None, parts["cpu"], "no entry: never on a CPU runner")
    asserts.equals(
        env,
        ["gpu-count:1", "gpu-vram-gb:0", "requires-gpu", "resources:gpu:1", "torch-unclassified"],
        part_tags("gpu", parts["gpu"]),
    )
    parts = route(["p/test_unknown.py"], _CLASSIFIED)
    asserts.true(env, "torch-unclassified" in part_tags("gpu", parts["gpu"]), "unknown is routed like gpu and tagged")
    return unittest.end(env)

route_unclassified_test = unittest.make(_route_unclassified_impl)

def _route_mixed_impl(ctx):
    env = unittest.begin(ctx)
    parts = route(["p/test_mixed.py"], _CLASSIFIED)
    labels = {"test_a": "cpu", "test_b": "gpu", "test_c": "unknown"}
    asserts.equals(env, {"p/test_mixed.py": labels}, parts["cpu"]["routing"])
    asserts.equals(env, {"p/test_mixed.py": labels}, parts["gpu"]["routing"])
    asserts.equals(env, ["requires-torch-cpu", "torch-label-source:static"], part_tags("cpu", parts["cpu"]))
    asserts.equals(
        env,
        ["gpu-count:1", "gpu-vram-gb:2", "requires-gpu", "resources:gpu:1", "torch-label-source:static", "torch-unclassified"],
        part_tags("gpu", parts["gpu"]),
        "the GPU part takes the largest need of its tests and is unclassified when one test is unknown",
    )
    return unittest.end(env)

route_mixed_test = unittest.make(_route_mixed_impl)

def _route_without_gpus_impl(ctx):
    env = unittest.begin(ctx)
    parts = route(["p/test_positional.py"], _CLASSIFIED)
    labels = {"test_ones[device0]": "gpu; cpu without gpus", "test_ones[device1]": "gpu"}
    asserts.equals(env, {"p/test_positional.py": labels}, parts["cpu"]["routing"], "device0 is the CPU case where no GPU is seen")
    asserts.equals(env, {"p/test_positional.py": labels}, parts["gpu"]["routing"])
    asserts.equals(env, ["gpu-count:1", "gpu-vram-gb:0", "requires-gpu", "resources:gpu:1", "torch-label-source:static"], part_tags("gpu", parts["gpu"]))
    return unittest.end(env)

route_without_gpus_test = unittest.make(_route_without_gpus_impl)

def _device_attribute_impl(ctx):
    env = unittest.begin(ctx)
    parts = route(["p/test_cpu.py", "p/test_gpu.py"], _CLASSIFIED, device = "gpu")
    asserts.equals(env, None, parts["cpu"])
    asserts.equals(env, ["p/test_cpu.py", "p/test_gpu.py"], parts["gpu"]["paths"])
    asserts.equals(
        env,
        ["cuda-min:12.4", "gpu-count:8", "gpu-model:h100", "gpu-vram-gb:80", "requires-gpu", "resources:gpu:8", "torch-label-source:attribute"],
        part_tags("gpu", parts["gpu"], gpu_count = 8, vram_gb = 80, cuda_min = "12.4", gpu_model = "h100"),
        "attributes override the file",
    )
    parts = route(["p/test_cpu.py"], _CLASSIFIED, device = "gpu")
    asserts.true(env, "gpu-count:1" in part_tags("gpu", parts["gpu"]), "a cpu file forced onto a GPU gets one")
    parts = route(["p/test_gpu.py"], _CLASSIFIED, device = "cpu")
    asserts.equals(env, None, parts["gpu"])
    return unittest.end(env)

device_attribute_test = unittest.make(_device_attribute_impl)

def _parse_tags_impl(ctx):
    env = unittest.begin(ctx)
    tags = part_tags("gpu", route(["p/test_gpu.py"], _CLASSIFIED)["gpu"]) + ["cpu:4", "exclusive"]
    asserts.equals(
        env,
        {"error": None, "values": {"exclusive": True, "gpu_count": 2, "requires_gpu": True, "resources_gpu": 2, "vram_gb": 4}},
        parse_tags(tags),
        "what part_tags writes, parse_tags reads",
    )
    asserts.equals(env, 4, cpu_threads(tags))
    asserts.equals(env, 1, cpu_threads(["requires-gpu"]))
    error = parse_tags(tags + ["gpu-count:3"])["error"]
    asserts.equals(env, "conflicting tags gpu-count:2 and gpu-count:3", error, "a user tag cannot silently change the count")
    return unittest.end(env)

parse_tags_test = unittest.make(_parse_tags_impl)

def tags_test_suite(name):
    """tags.bzl's unit tests, as one test_suite.

    Args:
      name: the test_suite's name.
    """
    unittest.suite(
        name,
        test_files_test,
        route_cpu_gpu_test,
        route_unclassified_test,
        route_mixed_test,
        route_without_gpus_test,
        device_attribute_test,
        parse_tags_test,
    )
