"""rules_python 0.22.1-specific glue: from a pip hub's requirement labels to install directories.

The only place that knows how rules_python names its wheel repositories. With rules_python 2.x the
hub is `pip.parse(hub_name = ..., python_version = "3.11")`, wheel repositories are named
`<hub>_311_<package>`, and `exports_files` comes from `pip.whl_mods`; adjust these two functions.
"""

def _wheel_repo(requirement_label):
    # "@@rules_python~~pip~pip_cpu//:torch_pkg" -> "@@rules_python~~pip~pip_cpu_torch"
    repo, _, target = requirement_label.partition("//:")
    if not target.endswith("_pkg"):
        fail("unexpected requirement label %r: rules_python's naming changed" % requirement_label)
    return repo + "_" + target[:-len("_pkg")]

def site_packages_dirs(all_requirements):
    """The exported `site-packages` directory of every wheel of a hub."""
    return [_wheel_repo(r) + "//:site-packages" for r in all_requirements]

def dist_infos(all_requirements):
    """The `*.dist-info` files (METADATA, RECORD with per-file sha256) of every wheel of a hub."""
    return [_wheel_repo(r) + "//:dist_info" for r in all_requirements]
