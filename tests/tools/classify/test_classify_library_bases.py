"""Small installed libraries read as code (docs/classification.md, "Round 17: small installed libraries read as
code"): a repository class deriving from a class of an installed package whose source is small (sb3-contrib's
algorithms over stable-baselines3's `OffPolicyAlgorithm`) runs that class's code as the repository's own:
`self.device` set by the base's `__init__` through a helper of the library is followed, the package's
`__init__` runs before any of its modules (so its import cycles start where Python starts them), a function or
Enum member of the library is what the library defines (pytest's id of a member is its `__str__`), and the
library's files are part of the result key. A large framework stays external."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.cache import result_key, tool_version
from tools.classify.installed import LIBRARY_MAX_BYTES, InstalledIndex, search_dirs
from tools.classify.modules import RepoIndex
from tools.classify.runner import run
from tools.classify.sources import Sources

LIBRARY = {
    # the package's __init__ imports the algorithms; the helpers import the package back (a cycle Python
    # resolves because the package runs first, whichever module a test names)
    # (a data file beside the package, read at import as stable-baselines3 reads its version.txt)
    "__init__.py": 'import os\n\nwith open(os.path.join(os.path.dirname(__file__), "version.txt")) as f:\n'
                   '    __version__ = f.read().strip()\n\nfrom algolib.algo import Algo\n',
    "utils.py": textwrap.dedent('''
        import torch

        import algolib

        VERSION = algolib.__version__


        def get_device(device="auto"):
            if device == "auto":
                device = "cuda"
            device = torch.device(device)
            if device.type == "cuda" and not torch.cuda.is_available():
                return torch.device("cpu")
            return device
        '''),
    "base.py": textwrap.dedent('''
        import torch

        from algolib import utils


        class Base:
            def __init__(self, device="auto"):
                self.device = utils.get_device(device)

            def on_gpu(self):
                return torch.zeros(1).cuda()
        '''),
    "layout.py": textwrap.dedent('''
        import enum


        class Layout(enum.Enum):
            mul_ir = enum.auto()
            ir_mul = enum.auto()

            def __str__(self):
                return "(mul,irrep)" if self == Layout.mul_ir else "(irrep,mul)"
        '''),
    "other.py": "from algolib.base import Base\n\n\nclass Other(Base):\n    pass\n",
    "algo.py": textwrap.dedent('''
        from algolib.base import Base


        class Algo(Base):
            def __init__(self, device="auto", seed=0):
                super().__init__(device)
                self.seed = seed
        '''),
}
REPO_TEST = textwrap.dedent('''
    import pytest
    import torch

    from algolib.algo import Algo
    from algolib.layout import Layout
    from algolib.utils import get_device
    from algolib.other import Other


    class Theirs(Other):  # (entered first: the library's import cycle through its __init__)
        pass


    class Mine(Algo):
        def setup(self):
            return torch.ones(2, device=self.device)


    def test_other_first():
        assert Theirs().device.type == "cpu"


    def test_auto_device():
        assert Mine().setup().sum() == 2


    def test_cuda_falls_back_to_cpu():
        assert Mine(device="cuda").setup().sum() == 2


    def test_base_method_on_gpu():
        assert Mine().on_gpu().sum() == 0


    def test_library_function_called_directly():
        assert torch.zeros(1, device=get_device("cuda")).sum() == 0


    @pytest.mark.parametrize("layout", [Layout.mul_ir, Layout.ir_mul])
    def test_layout(layout):
        assert torch.zeros(1).sum() == 0
    ''')
EXPECTED = {"test_other_first": "cpu", "test_auto_device": "cpu", "test_cuda_falls_back_to_cpu": "cpu",
            "test_base_method_on_gpu": "gpu", "test_library_function_called_directly": "cpu",
            "test_layout[(mul,irrep)]": "cpu", "test_layout[(irrep,mul)]": "cpu"}
# with the library external: the base's `__init__` sets attributes the analysis cannot see, `device="cuda"`
# passed to outside code counts as a GPU need, a method only the base defines is not analysed (its GPU use
# unseen), nor is what the outside helper returns (so `device=get_device("cuda")` is a device it cannot resolve)
EXTERNAL = {"test_other_first": "cpu", "test_auto_device": "unknown", "test_cuda_falls_back_to_cpu": "gpu",
            "test_base_method_on_gpu": "cpu", "test_library_function_called_directly": "unknown",
            # an installed package's lower-case attribute names no id (collect._installed_attribute)
            "test_layout": "cpu"}


def make_library(site: Path, padding: int = 0) -> None:
    pkg = site / "algolib"
    pkg.mkdir(parents=True)
    for name, text in LIBRARY.items():
        (pkg / name).write_text(text)
    (pkg / "version.txt").write_text("1.0\n")
    if padding:  # a module of generated data makes the package a large one
        (pkg / "tables.py").write_text("# " + "x" * padding + "\n")


@pytest.fixture
def repo(repo_with_test: Callable[[str], Path]) -> Path:
    return repo_with_test(REPO_TEST)


def labels(root: Path) -> dict[str, str]:
    tests = run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests
    return {k: v.label for k, v in tests.items()}


def test_a_small_library_base_is_followed_as_pytest_runs_it(repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    make_library(site)
    monkeypatch.syspath_prepend(str(site))
    assert labels(repo) == EXPECTED
    # the labels are what running the tests on this CPU-only machine shows
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "test_mine.py"],
                         cwd=repo, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    assert "PASSED test_mine.py::test_auto_device" in out, out
    assert "PASSED test_mine.py::test_cuda_falls_back_to_cpu" in out, out
    assert "FAILED test_mine.py::test_base_method_on_gpu" in out, out
    assert "PASSED test_mine.py::test_layout[(mul,irrep)]" in out, out


def test_without_the_library_the_base_is_external(repo: Path) -> None:
    assert labels(repo) == EXTERNAL


def test_a_large_framework_stays_external(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    make_library(site, padding=LIBRARY_MAX_BYTES)
    monkeypatch.syspath_prepend(str(site))
    assert labels(repo) == EXTERNAL


def test_the_library_files_are_part_of_the_result_key(repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_library(site)

    def key() -> str:
        src = Sources(repo, RepoIndex(["test_mine.py"]), installed=InstalledIndex(search_dirs(repo, [str(site)])))
        deps = src.file_deps("test_mine.py")
        assert deps == ["<installed>/algolib/__init__.py", "<installed>/algolib/algo.py",
                        "<installed>/algolib/base.py", "<installed>/algolib/layout.py", "<installed>/algolib/other.py",
                        "<installed>/algolib/utils.py", "test_mine.py"]
        return result_key(tool_version(), "test_mine.py", deps, {d: src.installed.digest(d) for d in deps})

    before = key()
    assert key() == before
    (site / "algolib" / "utils.py").write_text(LIBRARY["utils.py"].replace('device = "cuda"', 'device = "cpu"'))
    assert key() != before


def test_imports_in_a_library_resolve_within_it(tmp_path: Path) -> None:
    """A library module's imports of its own package are followed; another installed package's are not (they
    stay external, as calls from the repository into an installed package do)."""
    site = tmp_path / "site"
    make_library(site)
    other = site / "otherlib"
    other.mkdir()
    (other / "__init__.py").write_text("def helper():\n    return 1\n")
    (site / "algolib" / "uses_other.py").write_text("from otherlib import helper\nfrom algolib import utils\n")
    src = Sources(tmp_path, RepoIndex([]), installed=InstalledIndex(search_dirs(tmp_path / "none", [str(site)])))
    rel = "<installed>/algolib/uses_other.py"
    assert src.resolve_import("otherlib", rel, 0, "otherlib") is None
    assert src.resolve_import("algolib.utils", rel, 0, "algolib.utils") == "<installed>/algolib/utils.py"
    assert src.package_inits(rel) == ("<installed>/algolib/__init__.py",)
    assert src.installed.package_inits("<installed>/algolib/__init__.py") == ()


def test_a_second_run_reuses_the_cached_results(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The data file the library's __init__ opens is recorded as unreadable (named under `<installed>/`), the
    same state on every check, so the cache is used (it was not: the check asked the installed-module index)."""
    site = tmp_path / "site"
    make_library(site)
    monkeypatch.syspath_prepend(str(site))
    cache = tmp_path / "cache"
    first = run(repo, paths=["test_mine.py"], cache_dir=cache, workers=1)
    second = run(repo, paths=["test_mine.py"], cache_dir=cache, workers=1)
    assert (first.cache_hits, second.cache_hits) == (0, 1)
    assert second.files["test_mine.py"].tests == first.files["test_mine.py"].tests
