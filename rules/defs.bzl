"""Public API of rules_torch_test: route torch tests to CPU or GPU runners.

    load("@rules_torch_test//rules:defs.bzl", "torch_py_test")

    torch_py_test(
        name = "test_shapes",
        srcs = ["test_shapes.py"],
    )

See torch_py_test's docstring for attributes, docs/classification.md for the classification file
and docs/tags.md for the tags it adds. `py_site_packages` is the cheap-to-depend-on environment
that the `//rules:torch_runtime` flag points at; `pip_site_packages` makes one from a rules_python
pip hub (0.22.1 or 1.x).
"""

load("//rules/private:site_packages.bzl", _pip_site_packages = "pip_site_packages", _py_site_packages = "py_site_packages")
load("//rules/private:torch_py_test.bzl", _torch_py_test = "torch_py_test")

torch_py_test = _torch_py_test
py_site_packages = _py_site_packages
pip_site_packages = _pip_site_packages
