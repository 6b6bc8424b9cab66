"""`py_site_packages`: a whole installed Python environment as a handful of runfiles.

Why: the usual rules_python layout gives every test a runfiles tree with one symlink per file of
every wheel (torch alone is ~12,000 files), and a sandbox with the same again. Building that costs
~10-16 s per new test target, which a monorepo with 1,000 torch tests cannot pay. This rule instead
puts one symlink per *installed package directory* into the runfiles (Bazel source directories) and
adds them to the Python import path through `PyInfo.imports`.

Cache correctness does not rely on the directories (Bazel tracks source directories only by
mtime): every package's `*.dist-info` files, including `RECORD` with the sha256 of each installed
file, are declared inputs too. Changing a pin in a lock file changes the RECORD/METADATA content and
therefore every dependent test's action key.
"""

def _import_path(ctx, directory):
    # short_path of an external file is "../<repo>/<path>"; imports are runfiles-root relative.
    path = directory.short_path
    if path.startswith("../"):
        return path[3:]
    return ctx.workspace_name + "/" + path

def _py_site_packages_impl(ctx):
    directories = ctx.files.site_packages
    for d in directories:
        if not d.is_source:
            fail("py_site_packages %s: %s is not a source directory; list the `site-packages` directory of an installed wheel" % (ctx.label, d.path))
    imports = [_import_path(ctx, d) for d in directories]
    runfiles = ctx.runfiles(files = directories + ctx.files.content_keys)
    return [
        DefaultInfo(files = depset(ctx.files.content_keys), runfiles = runfiles),
        PyInfo(
            transitive_sources = depset(),
            imports = depset(imports),
            uses_shared_libraries = True,
        ),
    ]

py_site_packages = rule(
    implementation = _py_site_packages_impl,
    doc = """A Python environment made of installed `site-packages` directories, cheap to depend on.

Depend on it like on a `py_library`. Each directory becomes one runfiles symlink and one entry on
the import path; the `content_keys` files (the packages' `*.dist-info` contents) are what makes a
change of an installed package invalidate dependent tests.
""",
    attrs = {
        "content_keys": attr.label_list(
            allow_files = True,
            doc = "Files whose content identifies the installed packages exactly (`*.dist-info/RECORD`, `METADATA`).",
        ),
        "site_packages": attr.label_list(
            allow_files = True,
            doc = "`site-packages` directories of installed wheels (exported source directories).",
        ),
    },
    provides = [PyInfo],
)

def _wheel_targets(requirement_label):
    """The `site-packages` and `dist_info` labels of a pip hub requirement, per rules_python line.

    rules_python 0.22.1: "@@...pip_cpu//:torch_pkg" -> the wheel repository "@@...pip_cpu_torch"
    (canonical name; the `exports_files` annotation gives it `//:site-packages`).
    rules_python 1.x: "@@...pip_cpu//torch:pkg" -> the hub's own package "//torch", where
    `extra_hub_aliases = {"torch": ["site-packages"]}` adds `:site-packages` next to `:dist_info`.
    """
    repo, _, rest = requirement_label.partition("//")
    package, _, target = rest.partition(":")
    if package == "" and target.endswith("_pkg"):
        wheel = repo + "_" + target[:-len("_pkg")] + "//"
        return wheel + ":site-packages", wheel + ":dist_info"
    if package and target == "pkg":
        return repo + "//" + package + ":site-packages", repo + "//" + package + ":dist_info"
    fail("pip_site_packages: unexpected requirement label %r: expected rules_python 0.22's " % requirement_label +
         "\"@hub//:<name>_pkg\" or 1.x's \"@hub//<name>:pkg\"")

def pip_site_packages(name, requirements, **kwargs):
    """A `py_site_packages` of every wheel of a rules_python pip hub (0.22.1 or 1.x).

        load("@pip_cpu//:requirements.bzl", "all_requirements")
        pip_site_packages(name = "torch_runtime", requirements = all_requirements)

    Each wheel must export its install directory: with rules_python 0.22.1 an `annotations` entry
    whose `additive_build_content` is `exports_files(["site-packages"])`; with 1.x the same
    content through `pip.whl_mods` plus `extra_hub_aliases = {"<name>": ["site-packages"]}` on
    the hub (README.md, "Using these rules from another repository").

    Args:
      name: target name.
      requirements: the hub's `all_requirements` (or any subset of its requirement labels).
      **kwargs: passed to py_site_packages (visibility, tags, ...).
    """
    targets = [_wheel_targets(r) for r in requirements]
    py_site_packages(
        name = name,
        site_packages = [site_packages for site_packages, _ in targets],
        content_keys = [dist_info for _, dist_info in targets],
        **kwargs
    )
