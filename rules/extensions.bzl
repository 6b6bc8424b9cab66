"""Module extensions of rules_torch_test (public API).

    classification = use_extension("@rules_torch_test//rules:extensions.bzl", "torch_classification")
    classification.file(src = "//:torch_classification.json")

Only the root module's `file` tag counts: the classification describes the tests of the repository
being built. Without one, every test file is unclassified and routed to GPU runners (safe default).
"""

load("//rules/private:classification_repo.bzl", "torch_classification_repo")

def _torch_classification_impl(mctx):
    src = None
    for mod in mctx.modules:
        if not mod.is_root:
            continue
        tags = mod.tags.file
        if len(tags) > 1:
            fail("torch_classification: the root module may declare only one classification file, got %d" % len(tags))
        if tags:
            src = tags[0].src
    torch_classification_repo(name = "torch_classification", src = src)

torch_classification = module_extension(
    implementation = _torch_classification_impl,
    tag_classes = {
        "file": tag_class(
            attrs = {"src": attr.label(mandatory = True, doc = "The classification JSON of this repository.")},
            doc = "Points torch_py_test at this repository's classification file.",
        ),
    },
    doc = "Makes the root module's torch test classification loadable by `torch_py_test`.",
)
