"""Module extensions of rules_torch_test (public API).

    classification = use_extension("@rules_torch_test//rules:extensions.bzl", "torch_classification")
    classification.file(src = "//:torch_classification.json")
    classification.defaults(pytest_config = "//:pyproject.toml")  # optional

Only the root module's tags count: the classification and the defaults describe the tests of the
repository being built. Without a `file` tag every test file is unclassified and routed to GPU
runners (safe default); without `defaults`, torch_py_test reads no pytest config or perf
baselines file unless a target names one, so a repository needs no file it did not choose to have.
"""

load("//rules/private:classification_repo.bzl", "torch_classification_repo")

def _only_tag(tags, what):
    if len(tags) > 1:
        fail("torch_classification: the root module may declare only one `%s` tag, got %d" % (what, len(tags)))
    return tags[0] if tags else None

def _torch_classification_impl(mctx):
    file = None
    defaults = None
    for mod in mctx.modules:
        if not mod.is_root:
            continue
        file = _only_tag(mod.tags.file, "file")
        defaults = _only_tag(mod.tags.defaults, "defaults")
    torch_classification_repo(
        name = "torch_classification",
        src = file.src if file else None,
        pytest_config = defaults.pytest_config if defaults else None,
        perf_baselines = defaults.perf_baselines if defaults else None,
    )

torch_classification = module_extension(
    implementation = _torch_classification_impl,
    tag_classes = {
        "defaults": tag_class(
            attrs = {
                "perf_baselines": attr.label(doc = "pytest-torch's performance baselines file every torch_py_test reads unless it names its own."),
                "pytest_config": attr.label(doc = "The pytest configuration file every torch_py_test passes unless it names its own."),
            },
            doc = "Files of this repository that torch_py_test uses when a target does not say.",
        ),
        "file": tag_class(
            attrs = {"src": attr.label(mandatory = True, doc = "The classification JSON of this repository.")},
            doc = "Points torch_py_test at this repository's classification file.",
        ),
    },
    doc = "Makes the root module's torch test classification and defaults loadable by `torch_py_test`.",
)
