"""Idioms of the fifth accuracy round (issue 12), each on a minimal tree of its own; the corpus files under
tests/fixtures/classify/repo/tests/round5 carry the same idioms with their expected labels."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tools.classify.runner import run


def _labels(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    """{test key: label} of tests/test_x.py in a tree made of `files` (path -> source)."""
    for rel, src in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src))
    res = run(tmp_path, cache_dir=None, workers=1)
    return {k: v.label for k, v in res.files["tests/test_x.py"].tests.items()}


def test_main_block_does_not_run_under_pytest(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/test_x.py": """
        import torch

        def test_a():
            pass

        if __name__ == "__main__":
            torch.ones(1).cuda()
        """})
    assert got == {"test_a": "cpu"}


def test_module_name_is_not_main_inside_functions_either(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/test_x.py": """
        import torch

        def helper():
            if __name__ != "__main__":
                return torch.ones(1).cuda()

        def test_a():
            helper()
        """})
    assert got == {"test_a": "gpu"}
