"""`--write-markers`: put the classification into the test sources as `@pytest.mark.cpu` / `@pytest.mark.gpu`.

Why: a marker travels with the test (copied, moved, read by `pytest -m gpu` outside Bazel) and the
classifier treats it as a manual label that wins over inference. Edits go through libcst, a concrete
syntax tree, so comments, blank lines and quoting survive byte for byte; a file is only rewritten
when a marker was added, and always atomically. libcst is imported lazily: it is not in the Bazel
lock, so run the codemod as `python3 -m tools.feedback --write-markers` from the workspace root.

The markers are also registered in the pytest configuration pytest itself would read (pytest.ini,
.pytest.ini, pyproject.toml, tox.ini, setup.cfg), so `--strict-markers` passes.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.atomic_write import write_bytes_atomic as _write_bytes_atomic
from tools.contract.classification import label_without_gpus

MARKER_HELP = {
    "cpu": "cpu: the test runs on a CPU (manual classification)",
    "gpu": "gpu(count=1, vram_gb=0): the test needs GPUs (manual classification)",
}
KNOWN_MARKS = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu"}  # mark name -> label it means


@dataclass(frozen=True)
class Spec:
    """The marker one definition should carry."""

    label: str  # cpu | gpu
    count: int = 1
    vram_gb: float = 0

    def expression(self, pytest_name: str) -> str:
        if self.label == "cpu":
            return f"{pytest_name}.mark.cpu"
        args = []
        if self.count > 1:
            args.append(f"count={self.count}")
        if self.vram_gb:
            vram = int(self.vram_gb) if float(self.vram_gb).is_integer() else self.vram_gb
            args.append(f"vram_gb={vram}")
        return f"{pytest_name}.mark.gpu" + (f"({', '.join(args)})" if args else "")


@dataclass
class FileReport:
    path: str
    added: list[str] = field(default_factory=list)  # "TestA::test_x: @pytest.mark.gpu"
    already: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    error: str | None = None
    changed: bool = False


@dataclass
class MarkersReport:
    files: list[FileReport] = field(default_factory=list)
    config: str = ""

    def lines(self) -> list[str]:
        out = []
        for f in self.files:
            if f.error:
                out.append(f"markers: {f.path}: {f.error}")
            out += [f"markers: {f.path}::{a}" for a in f.added]
            out += [f"markers: conflict, left alone: {f.path}::{c}" for c in f.conflicts]
            out += [f"markers: not found in source: {f.path}::{n}" for n in f.not_found]
        changed = sum(1 for f in self.files if f.changed)
        added = sum(len(f.added) for f in self.files)
        out.append(f"markers: added {added} marker(s) in {changed} file(s)")
        if self.config:
            out.append(f"markers: {self.config}")
        return out


def plan(entry: Mapping[str, Any]) -> tuple[dict[tuple[str, ...], Spec], list[str]]:
    """Definition path (("TestA", "test_x") or ("test_x",)) -> marker, from one file entry's tests.

    Parametrizations of one function share one marker; when their labels differ the function is left
    for a person (mark the `pytest.param`s). Classes whose tests all agree get one class marker."""
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for key, test in (entry.get("tests") or {}).items():
        groups.setdefault(tuple(key.split("[", 1)[0].split("::")), []).append(test)
    specs: dict[tuple[str, ...], Spec] = {}
    problems: list[str] = []
    for defpath, tests in sorted(groups.items()):
        # (a key that names a CPU case where no GPU is seen, `without_gpus`, is both: one marker cannot say it)
        labels = {t.get("label") for t in tests} | {label_without_gpus(t) for t in tests}
        if labels - {"cpu", "gpu"}:
            continue  # unknown: nothing to write down
        if len(labels) != 1:
            problems.append(f"{'::'.join(defpath)}: parametrizations differ (cpu and gpu); mark the pytest.param()s")
            continue
        label = labels.pop()
        specs[defpath] = Spec(label, max(1, max(int(t.get("gpu_count", 0)) for t in tests)) if label == "gpu" else 1,
                              max(t.get("vram_gb", 0) for t in tests) if label == "gpu" else 0)
    by_class: dict[tuple[str, ...], set[Spec]] = {}
    for defpath, spec in specs.items():
        if len(defpath) > 1:
            by_class.setdefault(defpath[:-1], set()).add(spec)
    for cls, kinds in by_class.items():
        if len(kinds) == 1 and not any(p in specs for p in _prefixes(cls)):
            spec = kinds.pop()
            for defpath in [d for d in specs if d[:-1] == cls]:
                del specs[defpath]
            specs[cls] = spec
    return specs, problems


def _prefixes(path: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [path[:i] for i in range(1, len(path))]


def _mark_names(code: str) -> set[str]:
    """Labels (cpu/gpu) of the pytest marks named in an expression's source (`pytest.mark.gpu(count=2)`)."""
    return {KNOWN_MARKS[m] for m in re.findall(r"\bmark\.(\w+)\b", code) if m in KNOWN_MARKS}


def add_markers(source: bytes, entry: Mapping[str, Any], rel: str) -> tuple[bytes, FileReport]:
    """The file's new bytes (identical when nothing is missing) and what was done."""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    report = FileReport(rel)
    specs, problems = plan(entry)
    report.conflicts += problems
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        report.error = f"not parseable, left alone: {str(exc).splitlines()[0]}"
        return source, report
    pytest_name = None
    for stmt in module.body:
        for small in getattr(stmt, "body", []) if isinstance(stmt, cst.SimpleStatementLine) else []:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if module.code_for_node(alias.name) == "pytest":
                        pytest_name = module.code_for_node(alias.asname.name) if alias.asname else "pytest"
    need_import = pytest_name is None
    pytest_name = pytest_name or "pytest"

    def pytestmark(body: Any) -> set[str]:
        found: set[str] = set()
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign | cst.AnnAssign):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        if any(isinstance(t, cst.Name) and t.value == "pytestmark" for t in targets) and small.value:
                            found |= _mark_names(module.code_for_node(small.value))
        return found

    module_marks = pytestmark(module.body)
    seen: set[tuple[str, ...]] = set()

    class Writer(cst.CSTTransformer):
        def __init__(self) -> None:
            self.stack: list[str] = []
            self.inherited: list[set[str]] = [module_marks]
            self.depth_in_function = 0

        def _existing(self, node: cst.FunctionDef | cst.ClassDef) -> set[str]:
            return set().union(*(_mark_names(module.code_for_node(d.decorator)) for d in node.decorators))

        def _decorate(self, node: Any, defpath: tuple[str, ...], own: set[str]) -> Any:
            spec = specs.get(defpath)
            if spec is None:
                return node
            seen.add(defpath)
            name = "::".join(defpath)
            marks = own | set().union(*self.inherited)
            if marks:
                if spec.label in marks and len(marks) == 1:
                    report.already.append(name)
                else:
                    report.conflicts.append(f"{name}: marked {'/'.join(sorted(marks))} in source, classified "
                                            f"{spec.label}")
                return node
            if isinstance(node, cst.ClassDef) and _mark_names(module.code_for_node(node.body)):
                report.conflicts.append(f"{name}: some methods carry their own cpu/gpu marks; mark the rest by hand")
                return node
            expr = spec.expression(pytest_name)
            report.added.append(f"{name}: @{expr}")
            return node.with_changes(decorators=[cst.Decorator(decorator=cst.parse_expression(expr)),
                                                 *node.decorators])

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            if self.depth_in_function:
                return False
            self.stack.append(node.name.value)
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
            self.inherited.append(self._existing(node) | pytestmark(body))
            return True

        def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
            if self.depth_in_function:
                return updated
            defpath = tuple(self.stack)
            own = self.inherited.pop()
            result = self._decorate(updated, defpath, own)
            self.stack.pop()
            return result

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.depth_in_function += 1
            return True

        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            self.depth_in_function -= 1
            if self.depth_in_function:
                return updated
            return self._decorate(updated, (*self.stack, updated.name.value), self._existing(updated))

    new_module = module.visit(Writer())
    report.not_found += ["::".join(d) for d in specs if d not in seen]
    if not report.added:
        return source, report
    if need_import:
        context = CodemodContext()
        AddImportsVisitor.add_needed_import(context, "pytest")
        new_module = new_module.visit(AddImportsVisitor(context))
    new = new_module.bytes
    report.changed = new != source
    return new, report


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """A rewritten source is never half-written (tools/atomic_write.py)."""
    _write_bytes_atomic(path, data)


def write_markers(root: Path, data: Mapping[str, Any], paths: list[str] | None = None) -> MarkersReport:
    """Add missing markers to every classified test file under `root` (or under `paths`), then register them."""
    try:
        import libcst  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("libcst is not installed here (it is not in the Bazel lock): run "
                           "`pip install libcst` and `python3 -m tools.feedback --write-markers` from the "
                           "workspace root") from exc
    report = MarkersReport()
    for rel, entry in sorted((data.get("files") or {}).items()):
        if paths and not any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in paths):
            continue
        path = root / rel
        if not path.is_file():
            report.files.append(FileReport(rel, error="in the classification file but not on disk"))
            continue
        source = path.read_bytes()
        new, file_report = add_markers(source, entry, rel)
        if new != source:
            write_bytes_atomic(path, new)
        report.files.append(file_report)
    report.config = register_markers(root)
    return report


# --- pytest configuration --------------------------------------------------------------------


def _registered(entries: list[str]) -> set[str]:
    return {re.split(r"[:(]", e, maxsplit=1)[0].strip() for e in entries if e.strip()}


def _toml_table(text: str) -> tuple[str, list[str]] | None:
    """pyproject.toml's pytest table and its markers: `[tool.pytest.ini_options]`, or pytest 9's `[tool.pytest]`."""
    tool = tomllib.loads(text).get("tool", {})
    pytest_table = tool.get("pytest")
    if not isinstance(pytest_table, dict):
        return None
    if "ini_options" in pytest_table:
        return "tool.pytest.ini_options", list(pytest_table["ini_options"].get("markers", []))
    return "tool.pytest", list(pytest_table.get("markers", []))


def _array_end(text: str, start: int) -> int:
    """Index of the `]` closing the TOML array whose `[` is at `start` (strings and comments skipped)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == "#":
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        if c in "\"'":
            triple = text.startswith(c * 3, i)
            quote = c * 3 if triple else c
            i += len(quote)
            while i < len(text) and not text.startswith(quote, i):
                i += 2 if (c == '"' and text[i] == "\\") else 1
            i += len(quote)
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unterminated markers array")


def add_toml_markers(text: str, missing: list[str], table: str) -> str:
    """Insert marker strings into `markers = [...]` of `[table]` (or add the key), editing only those lines."""
    items = [f'"{MARKER_HELP[m]}"' for m in missing]
    header = re.search(r"(?m)^\[" + re.escape(table) + r"\][ \t]*(#.*)?$", text)
    if header is None:
        return text.rstrip("\n") + f"\n\n[{table}]\nmarkers = [\n" + "".join(f"    {i},\n" for i in items) + "]\n"
    nxt = re.search(r"(?m)^\[", text[header.end():])
    section_end = header.end() + nxt.start() if nxt else len(text)
    key = re.compile(r"(?m)^markers[ \t]*=[ \t]*\[").search(text, header.end(), section_end)
    if key is None:
        body = text[header.end():section_end].rstrip()
        at = header.end() + len(body)
        return text[:at] + "\nmarkers = [\n" + "".join(f"    {i},\n" for i in items) + "]" + text[at:]
    open_at = key.end() - 1
    close_at = _array_end(text, open_at)
    inner = text[open_at + 1:close_at]
    if "\n" not in inner:  # one-line array
        sep = ", " if inner.strip() else ""
        return text[:close_at].rstrip() + sep + ", ".join(items) + text[close_at:]
    before, after = text[:close_at], text[close_at:]
    lines = before.split("\n")
    closing_prefix = ""
    if not lines[-1].strip():  # `]` on its own line: keep its indentation
        closing_prefix = lines.pop()
    first = before.count("\n", 0, open_at)  # the `markers = [` line
    code_lines = [i for i in range(first, len(lines)) if _strip_toml_comment(lines[i]).strip()]
    last = code_lines[-1] if code_lines else first
    code = _strip_toml_comment(lines[last]).rstrip()
    if not code.endswith((",", "[")):
        lines[last] = code + "," + lines[last][len(code):]
    item_lines = [lines[i] for i in code_lines if i > first] or [lines[last]]
    indent = re.match(r"[ \t]*", item_lines[-1]).group(0) if last > first else "    "  # type: ignore[union-attr]
    return "\n".join(lines) + "\n" + "".join(f"{indent}{i},\n" for i in items) + closing_prefix + after


def _strip_toml_comment(line: str) -> str:
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[:i]
    return line


_INI = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}


def _ini_markers(text: str, section: str) -> list[str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    if not parser.has_section(section):
        return None
    return [ln for ln in parser.get(section, "markers", fallback="").splitlines() if ln.strip()]


def add_ini_markers(text: str, missing: list[str], section: str) -> str:
    """Append marker lines to `markers =` of `[section]` (or add the key), editing only those lines."""
    lines = text.splitlines(keepends=True)
    header = next((i for i, ln in enumerate(lines) if ln.strip() == f"[{section}]"), None)
    if header is None:
        sep = "" if not text or text.endswith("\n") else "\n"
        return text + sep + f"\n[{section}]\nmarkers =\n" + "".join(f"    {MARKER_HELP[m]}\n" for m in missing)
    end = next((i for i in range(header + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    key = next((i for i in range(header + 1, end) if re.match(r"markers\s*[=:]", lines[i])), None)
    newline = "\n" if not lines[-1].endswith("\r\n") else "\r\n"
    if key is None:
        last = max((i for i in range(header, end) if lines[i].strip()), default=header)
        if not lines[last].endswith(("\n", "\r\n")):
            lines[last] += newline
        block = [f"markers ={newline}"] + [f"    {MARKER_HELP[m]}{newline}" for m in missing]
        return "".join(lines[:last + 1] + block + lines[last + 1:])
    last = key
    indent = "    "
    for i in range(key + 1, end):
        if lines[i].strip() and lines[i][0] in " \t":
            last = i
            indent = re.match(r"[ \t]*", lines[i]).group(0)  # type: ignore[union-attr]
        elif lines[i].strip():
            break
    if not lines[last].endswith(("\n", "\r\n")):
        lines[last] += newline
    return "".join(lines[:last + 1] + [f"{indent}{MARKER_HELP[m]}{newline}" for m in missing] + lines[last + 1:])


def register_markers(root: Path) -> str:
    """Register cpu/gpu in the pytest config pytest would use at `root`; returns what was done."""
    for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        path = root / name
        if not path.is_file():
            continue
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        if name == "pyproject.toml":
            try:
                found = _toml_table(text)
            except tomllib.TOMLDecodeError as exc:
                return f"{path}: not valid TOML ({exc}); markers not registered"
            if found is None:
                continue
            table, markers = found
            missing = [m for m in MARKER_HELP if m not in _registered(markers)]
            if not missing:
                return f"{name}: cpu and gpu already registered"
            new = add_toml_markers(text, missing, table)
            after = _toml_table(new)
            if after is None or set(MARKER_HELP) - _registered(after[1]):
                return f"{path}: could not edit [{table}] markers safely; add {missing} by hand"
        else:
            section = _INI[name]
            try:
                markers = _ini_markers(text, section)
            except configparser.Error as exc:
                return f"{path}: unreadable ({exc}); markers not registered"
            if markers is None:
                if name == "pytest.ini":  # pytest.ini is pytest's config even without the section
                    markers = []
                else:
                    continue
            missing = [m for m in MARKER_HELP if m not in _registered(markers)]
            if not missing:
                return f"{name}: cpu and gpu already registered"
            new = add_ini_markers(text, missing, section)
            if set(MARKER_HELP) - _registered(_ini_markers(new, section) or []):
                return f"{path}: could not edit [{section}] markers safely; add {missing} by hand"
        write_bytes_atomic(path, new.encode("utf-8"))
        return f"{name}: registered {', '.join(missing)}"
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text(encoding="utf-8")
        new = add_toml_markers(text, list(MARKER_HELP), "tool.pytest.ini_options")
        write_bytes_atomic(pyproject, new.encode("utf-8"))
        return "pyproject.toml: added [tool.pytest.ini_options] markers"
    write_bytes_atomic(root / "pytest.ini", ("[pytest]\nmarkers =\n" + "".join(
        f"    {MARKER_HELP[m]}\n" for m in MARKER_HELP)).encode("utf-8"))
    return "pytest.ini: created with cpu and gpu markers"
