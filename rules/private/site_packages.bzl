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
