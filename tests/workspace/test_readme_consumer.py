"""README's "Using these rules from another repository" is examples/consumer/, which the e2e test runs.

Each code block of that section must be a file of examples/consumer (or a contiguous part of one),
so the recipe users copy is the one tests/e2e/test_consumer.py proves on both rules_python
lines. The consumer's lock and wheel lists must also stay in step with its MODULE.bazel files.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSUMER = ROOT / "examples" / "consumer"
SECTION = "## Using these rules from another repository"


def section_blocks(readme: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block of the consumer section."""
    start = readme.index(SECTION)
    end = readme.index("\n## ", start + len(SECTION))
    return re.findall(r"^```(\w*)\n(.*?)^```$", readme[start:end], re.S | re.M)


def consumer_files() -> dict[str, str]:
    return {
        str(path.relative_to(CONSUMER)): path.read_text()
        for path in sorted(CONSUMER.rglob("*"))
        if path.is_file() and path.suffix != ".py"
    }


def test_every_readme_block_is_a_consumer_file_or_part_of_one():
    files = consumer_files()
    blocks = [body for language, body in section_blocks((ROOT / "README.md").read_text()) if language != "bash"]
    assert len(blocks) >= 5
    for body in blocks:
        assert any(body in text for text in files.values()), f"README block is in no examples/consumer file:\n{body}"


def test_readme_shows_each_consumer_file_users_write_whole():
    bodies = {body for _, body in section_blocks((ROOT / "README.md").read_text())}
    for name in ["rules_python_1/MODULE.bazel", "common/BUILD.bazel", "common/.bazelrc", "common/tests/BUILD.bazel"]:
        assert (CONSUMER / name).read_text() in bodies, f"README must show examples/consumer/{name} whole"


def test_readme_commands_are_the_e2e_commands():
    blocks = section_blocks((ROOT / "README.md").read_text())
    commands = "".join(body for language, body in blocks if language == "bash")
    e2e = (ROOT / "tests" / "e2e" / "test_consumer.py").read_text()
    assert '"run", "@rules_torch_test//tools:classify", "--", "--update"' in e2e
    assert "bazel run @rules_torch_test//tools:classify -- --update" in commands
    assert '"run", "@rules_torch_test//tools:export_gpu_manifest"' in e2e
    assert "bazel run @rules_torch_test//tools:export_gpu_manifest" in commands
    assert '"test", "//..."' in e2e and "bazel test //..." in commands
    assert '"test", "--config=gpu", "//..."' in e2e and "bazel test --config=gpu //..." in commands


def pins(lock: Path) -> dict[str, str]:
    """name -> the pin line and its hashes, as written."""
    blocks = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)((?: \\\n\s+--hash=\S+)+)", lock.read_text(), re.M)
    return {name.lower(): version + " ".join(hashes.split()) for name, version, hashes in blocks}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def module_packages(module: Path) -> set[str]:
    match = re.search(r"^_PACKAGES = \[(.*?)\]$", module.read_text(), re.S | re.M)
    assert match, f"{module} has no _PACKAGES list"
    return {normalized(name) for name in re.findall(r'"([^"]+)"', match.group(1))}


def test_consumer_lock_pins_as_this_repository_does():
    consumer = pins(CONSUMER / "common" / "requirements_lock.txt")
    ours = pins(ROOT / "requirements_lock_cpu.txt")
    assert consumer, "no pins read from the consumer lock"
    differing = {name for name in consumer if consumer[name] != ours.get(name)}
    assert not differing, f"pin these as requirements_lock_cpu.txt does: {sorted(differing)}"


def test_each_consumer_module_exports_every_locked_wheel():
    locked = {normalized(name) for name in pins(CONSUMER / "common" / "requirements_lock.txt")}
    for line in ["rules_python_0.22", "rules_python_1"]:
        assert module_packages(CONSUMER / line / "MODULE.bazel") == locked, line
