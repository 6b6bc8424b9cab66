"""Where things are for a tool started by `bazel run` or from the workspace root.

`bazel run` starts a tool inside its runfiles tree and names the user's workspace in
$BUILD_WORKSPACE_DIRECTORY; Bazel writes a target's test logs under bazel-testlogs in a fixed layout.
Every tool resolves both the same way, here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def workspace_root(explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """An explicit root (e.g. --root), else $BUILD_WORKSPACE_DIRECTORY, else the current directory."""
    if explicit:
        return Path(explicit).resolve()
    workspace = (os.environ if env is None else env).get("BUILD_WORKSPACE_DIRECTORY")
    return Path(workspace).resolve() if workspace else Path.cwd().resolve()


def in_workspace(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path:
    """A path the user gave: relative ones are relative to the workspace, not the runfiles tree."""
    path = Path(path)
    return path if path.is_absolute() else workspace_root(None, env) / path


def testlogs_dir(testlogs: Path, label: str) -> Path:
    """Where Bazel writes a target's logs: bazel-testlogs/[external/REPO/]PKG/NAME."""
    repo, _, rest = label.partition("//")
    package, _, name = rest.partition(":")
    base = testlogs
    repo = repo.lstrip("@")
    if repo:
        base = base / "external" / repo
    return base / package / name if package else base / name
