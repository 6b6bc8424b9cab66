"""MODULE.bazel's list of locked packages must cover both lock files exactly.

Every wheel needs the `exports_files` annotation for py_site_packages to see its directory; a
package missing from the list would fail the build with a puzzling "no such target" error.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def locked_names() -> set[str]:
    names: set[str] = set()
    for lock in ("requirements_lock_cpu.txt", "requirements_lock_cu124.txt"):
        for line in (ROOT / lock).read_text().splitlines():
            match = re.match(r"^([A-Za-z0-9_.-]+)==", line)
            if match:
                names.add(match.group(1))
    return names


def module_list() -> set[str]:
    text = (ROOT / "MODULE.bazel").read_text()
    match = re.search(r"^_LOCKED_PACKAGES = (\[.*?\])$", text, re.S | re.M)
    assert match, "MODULE.bazel has no _LOCKED_PACKAGES list"
    return set(ast.literal_eval(match.group(1)))


def test_every_locked_package_is_annotated_and_nothing_else():
    missing = locked_names() - module_list()
    extra = module_list() - locked_names()
    assert not missing, f"add to MODULE.bazel _LOCKED_PACKAGES: {sorted(missing)}"
    assert not extra, f"remove from MODULE.bazel _LOCKED_PACKAGES: {sorted(extra)}"
