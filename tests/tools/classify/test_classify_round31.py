"""Round 31: a warm run that never loads the analysis."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


def _settle(tree: Path) -> None:
    """Date every file of tree a minute back: a file changed within a second of a run may change again unseen
    (runner.RACY_NS), so only settled files let the next run answer from the cache."""
    for p in tree.rglob("*"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def test_a_warm_run_does_not_load_the_analysis(tmp_path: Path) -> None:
    # an unchanged tree is answered from the cache: the interpreter is not imported (half of a warm command's time)
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_a.py").write_text("import torch\n\n\ndef test_a():\n    assert torch.ones(1).sum() == 1\n")
    _settle(tree)  # (files changed within a second of a run are not trusted by the next one)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tools.classify.runner import run\n"
        f"r = run(Path({str(tree)!r}), cache_dir=Path({str(tmp_path / 'cache')!r}), workers=1)\n"
        "assert r.files['tests/test_a.py'].tests['test_a'].label == 'cpu'\n"
        "print('tools.classify.analyzer' in sys.modules, 'tools.classify.dataflow' in sys.modules)\n")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert [p.stdout.split() for p in runs] == [["True", "True"], ["False", "False"]]
