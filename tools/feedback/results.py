"""Read test results: Bazel's `bazel-testlogs/**/test.xml` + `test.log` and plain pytest JUnit XML.

Why streaming everywhere: a CI run's logs can be gigabytes (a test printing in a loop, or Bazel's
own test.xml embedding the whole log when the test died before writing one). XML is fed to expat in
chunks and only a bounded head and tail of each failure text is kept; of test.log only the tail is
read, because pytest's failure report and summary come last. Attribute values (a `message` can hold
a whole log) are cut before expat sees them: expat holds a start tag whole and, before 2.6, rescans
it for every chunk, so one 128 MiB attribute took 14 s and its full size in memory. Bad input (missing, truncated or
invalid XML, non-UTF-8 bytes) never stops the run: it is recorded as a `Problem` and whatever could
be read is kept.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

from tools.contract.runtime import split_nodeid

MAX_XML_BYTES = 256 * 2**20  # beyond this a test.xml is not read further (reported)
LOG_TAIL_BYTES = 8 * 2**20  # how much of the end of test.log the fallback reads
TEXT_HEAD = 8 * 1024  # kept per failure text: the head (test source) ...
TEXT_TAIL = 48 * 1024  # ... and the tail (the exception lines)
MAX_ATTRIBUTE = 64 * 1024  # characters kept of one XML attribute value (a `message`); the rest is cut
CHUNK = 1 << 20

OUTCOMES = ("passed", "failed", "error", "skipped")
RUNTIME_JSON = re.compile(r"^torch-runtime(\.shard\d+)?\.json$")
GPU_MEMORY_JSON = re.compile(r"^torch-gpu-memory(\.shard\d+)?\.json$")
# Control bytes XML forbids; in UTF-8 they never occur inside a multi-byte character, so deleting them
# from the raw bytes (bytes.translate: GB/s; a regex over the decoded text managed 40 MB/s) is exact.
_ILLEGAL_XML = bytes([*range(0x01, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20)])
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Problem:
    """An input that could not be (fully) read, and why; reported, never fatal."""

    path: str
    reason: str


@dataclass(frozen=True)
class TestCase:
    """One pytest test's outcome. `nodeid` is workspace-relative: `path::Class::test[param]`, or a bare
    path for a collection error of the whole file."""

    __test__ = False  # not a pytest test class, whatever imports it

    nodeid: str
    outcome: str  # passed | failed | error | skipped
    message: str = ""
    details: str = ""
    run: int = 0  # index into Results.runs


@dataclass
class Run:
    """One test.xml (one Bazel target or shard) or one plain JUnit file, with the hardware it ran on."""

    origin: str  # the file the cases came from
    target: str | None = None  # Bazel label (the testsuite name our runner sets), if any
    runtime: list[dict[str, Any]] = field(default_factory=list)  # torch-runtime*.json contents
    gpu_memory_files: list[str] = field(default_factory=list)

    @property
    def cuda_available(self) -> bool:
        """True when any shard saw CUDA, or the run recorded GPU memory (only GPU runs do)."""
        return bool(self.gpu_memory_files) or any(r.get("cuda_available") is True for r in self.runtime)

    @property
    def label(self) -> str:
        """How reports name this run: `test.xml of //pkg:target`, or the file path."""
        name = Path(self.origin).name
        return f"{name} of {self.target}" if self.target else self.origin


@dataclass
class Results:
    cases: list[TestCase] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def extend(self, other: Results) -> None:
        offset = len(self.runs)
        self.runs.extend(other.runs)
        self.cases.extend(TestCase(c.nodeid, c.outcome, c.message, c.details, c.run + offset) for c in other.cases)
        self.problems.extend(other.problems)


# --- bounded text ----------------------------------------------------------------------------


class _Capped:
    """Accumulates text keeping only a head and a tail: memory stays bounded whatever the input."""

    def __init__(self, head: int = TEXT_HEAD, tail: int = TEXT_TAIL):
        self.head_limit, self.tail_limit = head, tail
        self.head: list[str] = []
        self.head_len = 0
        self.tail = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        if self.head_len < self.head_limit:
            take = text[: self.head_limit - self.head_len]
            self.head.append(take)
            self.head_len += len(take)
            text = text[len(take):]
        if text:
            joined = self.tail + text
            if len(joined) > self.tail_limit:
                self.dropped += len(joined) - self.tail_limit
                joined = joined[-self.tail_limit:]
            self.tail = joined

    def value(self) -> str:
        gap = f"\n[... {self.dropped} characters omitted ...]\n" if self.dropped else ""
        return "".join(self.head) + gap + self.tail


class _AttributeCap:
    """Streaming filter over XML text that cuts every attribute value to `limit` characters.

    It tracks only what decides where attribute values are (markup, quotes, comments, CDATA), with
    str.find, so it costs a fraction of parsing. A cut value ends with `[... N characters cut ...]`
    and never in the middle of an entity reference. Comments are emptied (nothing reads them). Line
    numbers stay right: the newlines of what is cut come back as whitespace (inside the start tag,
    or the emptied comment)."""

    _MARKUP_END = re.compile("[\"'>]")

    def __init__(self, limit: int = MAX_ATTRIBUTE):
        self.limit = limit
        self.state = "text"
        self.quote = ""
        self.kept = 0
        self.cut = 0
        self.cut_lines = 0
        self.in_entity = False
        self.pending = ""
        self.values_cut = 0
        self.largest = 0

    def feed(self, text: str, final: bool = False) -> str:
        buf, self.pending = self.pending + text, ""
        out: list[str] = []
        i, n = 0, len(buf)
        while i < n:
            if self.state == "text":
                j = buf.find("<", i)
                if j < 0:
                    out.append(buf[i:])
                    break
                out.append(buf[i:j])
                if n - j < 9 and not final:  # `<!--` or `<![CDATA[` may continue in the next chunk
                    self.pending = buf[j:]
                    break
                if buf.startswith("<!--", j):
                    out.append("<!--")
                    self.state, i = "comment", j + 4
                elif buf.startswith("<![CDATA[", j):
                    out.append("<![CDATA[")
                    self.state, i = "cdata", j + 9
                elif buf.startswith("<?", j):  # the XML declaration: its values are not ours to cut
                    out.append("<?")
                    self.state, i = "pi", j + 2
                else:
                    out.append("<")
                    self.state, i = "markup", j + 1
            elif self.state in ("comment", "cdata", "pi"):
                end = {"comment": "-->", "cdata": "]]>", "pi": "?>"}[self.state]
                j = buf.find(end, i)
                if j < 0:
                    keep = max(i, n - 2) if not final else n  # the end marker may straddle chunks
                    out.append("\n" * buf.count("\n", i, keep) if self.state == "comment" else buf[i:keep])
                    self.pending = buf[keep:]
                    break
                stop = j + len(end)
                out.append("\n" * buf.count("\n", i, j) + end if self.state == "comment" else buf[i:stop])
                self.state, i = "text", stop
            elif self.state == "markup":
                m = self._MARKUP_END.search(buf, i)
                if m is None:
                    out.append(buf[i:])
                    break
                out.append(buf[i:m.end()])
                i = m.end()
                if m.group() == ">":
                    self.state = "text"
                else:
                    self.state, self.quote, self.kept, self.cut, self.cut_lines = "value", m.group(), 0, 0, 0
                    self.in_entity = False
            else:  # inside an attribute value
                j = buf.find(self.quote, i)
                segment = buf[i:j if j >= 0 else n]
                take = self._take(segment)
                out.append(take)
                self.kept += len(take)
                self.cut += len(segment) - len(take)
                self.cut_lines += segment.count("\n", len(take))
                if j < 0:
                    break
                if self.cut:
                    out.append(f" [... {self.cut} characters cut ...]")
                    self.values_cut += 1
                    self.largest = max(self.largest, self.kept + self.cut)
                out.append(self.quote + "\n" * self.cut_lines)
                self.state, i = "markup", j + 1
        return "".join(out)

    def _take(self, segment: str) -> str:
        """The part of `segment` to keep; never ends inside an entity reference such as `&amp;`:
        one begun before the limit is finished (entities are short) or, if it cannot be, dropped."""
        if self.cut:
            return ""
        room = self.limit - self.kept
        if len(segment) <= room:
            take = segment
        else:
            take = segment[:max(room, 0)]
            amp = take.rfind("&")
            if (";" not in take[amp:]) if amp >= 0 else self.in_entity:
                semi = segment.find(";", len(take), len(take) + 32)
                if semi >= 0:
                    take = segment[:semi + 1]
                elif amp >= 0:
                    take = take[:amp]
                elif len(segment) <= 32:
                    take = segment  # the `;` may come with the next chunk
        amp = take.rfind("&")
        self.in_entity = (";" not in take[amp:]) if amp >= 0 else (self.in_entity and ";" not in take)
        return take


# --- node ids --------------------------------------------------------------------------------

PathCheck = Callable[[str], bool]


def nodeid_from_junit(classname: str, name: str, file: str | None = None, is_test_file: PathCheck | None = None) -> str:
    """Undo pytest's JUnit mangling (`tests/a/test_m.py::TestC::test[p]` -> classname `tests.a.test_m.TestC`,
    name `test[p]`). xunit1 files carry `file`; otherwise the split between module and classes is found by
    asking `is_test_file` about each candidate path, else by pytest's convention that classes are
    capitalised (`Test*`). An empty classname is a collection error: `name` is then the module."""
    if not classname:
        parts, leaf = name.split("."), None
    else:
        parts, leaf = classname.split("."), name
    if file:
        module = re.sub(r"\.py$", "", file.replace("\\", "/")).replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            classes = [p for p in classname[len(module):].split(".") if p]
            return "::".join([file.replace("\\", "/"), *classes, *([leaf] if leaf else [])])
        if not classname and name == module:
            return file.replace("\\", "/")
    split = None
    if is_test_file is not None:
        for end in range(len(parts), 0, -1):
            if is_test_file("/".join(parts[:end]) + ".py"):
                split = end
                break
    if split is None:
        split = len(parts)
        while split > 1 and parts[split - 1][:1].isupper():
            split -= 1
    path = "/".join(parts[:split]) + ".py"
    return "::".join([path, *parts[split:], *([leaf] if leaf else [])])


# --- JUnit XML (streamed through expat) ------------------------------------------------------


class _JUnitReader:
    """expat callbacks collecting test cases with bounded memory."""

    def __init__(self, is_test_file: PathCheck | None, line: Callable[[], int] = lambda: 0):
        self.is_test_file = is_test_file
        self.line = line
        self.problems: list[str] = []
        self.cases: list[TestCase] = []
        self.suites: list[str] = []
        self.case: dict[str, Any] | None = None
        self.capture: _Capped | None = None
        self.bazel_generated = False

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "testsuite":
            self.suites.append(attrs.get("name", ""))
        elif tag == "testcase":
            if "classname" not in attrs:  # Bazel's own test.xml: the test never wrote one
                self.bazel_generated = True
                return
            if not attrs.get("name") and attrs.get("classname"):
                # Without a name the node id would be the bare file: a collection error that moves
                # every test of the file. Report the one case, read the rest.
                self.problems.append(f"<testcase> at line {self.line()} (classname {attrs['classname'][:200]!r}) "
                                     "has no name; that test case is skipped")
                return
            self.case = {"attrs": attrs, "outcome": "passed", "messages": _Capped(), "text": _Capped()}
        elif self.case is not None and tag in ("failure", "error", "skipped"):
            outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
            if self.case["outcome"] in ("passed", "skipped"):
                self.case["outcome"] = outcome
            if attrs.get("message"):
                if self.case["messages"].head_len:
                    self.case["messages"].add("\n")
                self.case["messages"].add(attrs["message"])
            self.capture = self.case["text"]

    def end(self, tag: str) -> None:
        if tag in ("failure", "error", "skipped"):
            if self.capture is not None:
                self.capture.add("\n")
            self.capture = None
        elif tag == "testcase" and self.case is not None:
            a = self.case["attrs"]
            nodeid = nodeid_from_junit(a.get("classname", ""), a.get("name", ""), a.get("file"), self.is_test_file)
            self.cases.append(TestCase(nodeid, self.case["outcome"], self.case["messages"].value(),
                                       self.case["text"].value()))
            self.case = None

    def data(self, text: str) -> None:
        if self.capture is not None:
            self.capture.add(text)


def _read_chunks(path: Path, limit: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        left = limit
        while left > 0:
            chunk = handle.read(min(CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk


def parse_junit(path: Path, is_test_file: PathCheck | None = None, max_bytes: int = MAX_XML_BYTES
                ) -> tuple[list[TestCase], str | None, bool, str | None]:
    """(cases, suite name, Bazel-generated?, problem). Cases before a truncation or syntax error are kept.

    Bytes are decoded leniently (invalid UTF-8 becomes U+FFFD) and control characters XML forbids are
    dropped, so one stray byte in a captured log does not hide every test after it."""
    parser = expat.ParserCreate()
    reader = _JUnitReader(is_test_file, lambda: parser.CurrentLineNumber)
    cap = _AttributeCap()
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.data
    parser.buffer_text = True
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    problem = None
    size = path.stat().st_size
    offset = 0
    try:
        for chunk in _read_chunks(path, max_bytes):
            if b"\0" in chunk:  # no XML has NUL bytes: a binary file, or one never completely written
                where = offset + chunk.index(b"\0")
                return reader.cases, _suite(reader), reader.bazel_generated, (
                    f"invalid XML: NUL byte at offset {where}; kept the {len(reader.cases)} test case(s) before it")
            offset += len(chunk)
            parser.Parse(cap.feed(decoder.decode(chunk.translate(None, _ILLEGAL_XML))), False)
        if size > max_bytes:
            problem = f"only the first {_size(max_bytes)} of {_size(size)} read; later test cases ignored"
        else:
            parser.Parse(cap.feed(decoder.decode(b"", True), final=True), True)
    except expat.ExpatError as exc:
        what = "truncated" if exc.code in (expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS],
                                           expat.errors.codes[expat.errors.XML_ERROR_UNCLOSED_TOKEN]) else "invalid XML"
        problem = (f"{what}: {expat.errors.messages[exc.code]} at line {exc.lineno}, column {exc.offset}; "
                   f"kept the {len(reader.cases)} test case(s) before it")
    if cap.values_cut:
        reader.problems.append(f"{cap.values_cut} attribute value(s) over {MAX_ATTRIBUTE} characters cut "
                               f"(largest {cap.largest})")
    problems = [*reader.problems, *([problem] if problem else [])]
    return reader.cases, _suite(reader), reader.bazel_generated, "; ".join(problems) or None


def _suite(reader: _JUnitReader) -> str | None:
    """The Bazel label our runner puts in the testsuite name (`-o junit_suite_name=//pkg:target`)."""
    return next((s for s in reader.suites if s.startswith("//") or s.startswith("@")), None)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


# --- test.log fallback -----------------------------------------------------------------------

_SUMMARY = re.compile(r"^(FAILED|ERROR) (.+?)(?: - (.*))?$")
_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_SECTION = re.compile(r"^={3,} .* ={3,}$")


def read_tail(path: Path, max_bytes: int = LOG_TAIL_BYTES) -> tuple[str, int]:
    """The last `max_bytes` of a file, decoded leniently, and how many bytes were skipped before it."""
    size = path.stat().st_size
    skipped = max(0, size - max_bytes)
    with path.open("rb") as handle:
        handle.seek(skipped)
        data = handle.read(max_bytes)
    text = data.decode("utf-8", errors="replace")
    if skipped:
        text = text.split("\n", 1)[-1]  # drop the partial first line
    return _ANSI.sub("", text.replace("\x00", "")), skipped


def parse_log(text: str) -> list[TestCase]:
    """Failures from pytest's terminal report (FAILURES/ERRORS sections + short summary).

    Only failed and errored tests appear there; that is all the feedback loop needs from a run whose
    test.xml is missing or broken."""
    lines = text.splitlines()
    summary: dict[str, tuple[str, str]] = {}
    for line in lines:
        m = _SUMMARY.match(line)
        if m and ("::" in m.group(2) or m.group(2).endswith(".py")):
            summary[m.group(2)] = ("failed" if m.group(1) == "FAILED" else "error", m.group(3) or "")
    by_title: dict[str, str] = {}
    for nodeid in summary:
        path, key = split_nodeid(nodeid)
        by_title[key.replace("::", ".") if key else path] = nodeid
    blocks: dict[str, _Capped] = {}
    current: _Capped | None = None
    for line in lines:
        header = _HEADER.match(line)
        if header:
            title = re.sub(r"^(ERROR at (setup|teardown) of|ERROR collecting) ", "", header.group(1))
            nodeid = by_title.get(title)
            current = blocks.setdefault(nodeid, _Capped()) if nodeid else None
            continue
        if _SECTION.match(line) or line.startswith("- generated xml file") or re.match(r"^-{3,} .* -{3,}$", line):
            current = None
            continue
        if current is not None:
            current.add(line + "\n")
    return [TestCase(nodeid, outcome, message, blocks[nodeid].value() if nodeid in blocks else "")
            for nodeid, (outcome, message) in summary.items()]


# --- Bazel outputs beside test.xml -----------------------------------------------------------


def _outputs_json(directory: Path, problems: list[Problem]) -> tuple[list[dict[str, Any]], list[str]]:
    """torch-runtime*.json contents and torch-gpu-memory*.json names in `test.outputs/` (or its outputs.zip,
    when Bazel was told to zip undeclared outputs)."""
    outputs = directory / "test.outputs"
    entries: dict[str, Path | bytes] = {}
    if outputs.is_dir():
        entries = {p.name: p for p in sorted(outputs.iterdir()) if p.is_file()}
        archive = outputs / "outputs.zip"
        if archive.is_file():
            try:
                with zipfile.ZipFile(archive) as z:
                    for member in z.namelist():
                        base = Path(member).name
                        if base not in entries and (RUNTIME_JSON.match(base) or GPU_MEMORY_JSON.match(base)):
                            entries[base] = z.read(member) if RUNTIME_JSON.match(base) else b""
            except (OSError, zipfile.BadZipFile) as exc:
                problems.append(Problem(str(archive), f"unreadable outputs.zip: {exc}"))
    runtime: list[dict[str, Any]] = []
    memory: list[str] = []
    for name, entry in sorted(entries.items()):
        if GPU_MEMORY_JSON.match(name):
            memory.append(str(outputs / name))
        elif RUNTIME_JSON.match(name):
            try:
                info = json.loads(entry.read_bytes() if isinstance(entry, Path) else entry)
            except (OSError, ValueError) as exc:
                problems.append(Problem(str(outputs / name), f"unreadable runtime info: {exc}"))
                continue
            if isinstance(info, dict):
                runtime.append(info)
            else:
                problems.append(Problem(str(outputs / name), "not a JSON object; ignored"))
    return runtime, memory


# --- entry points ----------------------------------------------------------------------------


def read_test_dir(directory: Path, is_test_file: PathCheck | None = None, *, max_xml_bytes: int = MAX_XML_BYTES,
                  log_tail_bytes: int = LOG_TAIL_BYTES) -> Results:
    """One Bazel test result directory (`bazel-testlogs/<pkg>/<target>[/shard_i_of_n]`)."""
    out = Results()
    xml, log = directory / "test.xml", directory / "test.log"
    runtime, memory = _outputs_json(directory, out.problems)
    cases: list[TestCase] = []
    suite = None
    need_log = True
    if xml.is_file():
        try:
            cases, suite, generated, problem = parse_junit(xml, is_test_file, max_xml_bytes)
        except OSError as exc:
            cases, generated, problem = [], False, f"unreadable: {exc}"
        if problem:
            out.problems.append(Problem(str(xml), problem))
        need_log = bool(problem) or (generated and not cases)
    else:
        out.problems.append(Problem(str(xml), "missing; falling back to test.log"))
    origin = str(xml)
    if need_log and log.is_file():
        try:
            text, skipped = read_tail(log, log_tail_bytes)
        except OSError as exc:
            out.problems.append(Problem(str(log), f"unreadable: {exc}"))
        else:
            if skipped:
                out.problems.append(Problem(str(log), f"{_size(skipped + len(text))} log: read only its last "
                                                      f"{_size(log_tail_bytes)}"))
            known = {c.nodeid for c in cases}
            from_log = [c for c in parse_log(text) if c.nodeid not in known]
            if not cases and not from_log:
                last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "(empty)")
                why = "the test process ended before pytest reported (crash, kill or timeout?)"
                out.problems.append(Problem(str(log), f"no per-test results: {why}; last log line: {last[:200]}"))
            cases += from_log
            if not xml.is_file():
                origin = str(log)
            suite = suite or _target_from_log(text)
    target = suite or next((r.get("target") for r in runtime if r.get("target")), None)
    out.runs.append(Run(origin, target, runtime, memory))
    out.cases = [TestCase(c.nodeid, c.outcome, c.message, c.details, 0) for c in cases]
    return out


def _target_from_log(text: str) -> str | None:
    m = re.search(r"^Executing tests from (\S+)$", text, re.M)
    return m.group(1) if m else None


def read_junit_file(path: Path, is_test_file: PathCheck | None = None, *,
                    max_xml_bytes: int = MAX_XML_BYTES) -> Results:
    """A plain pytest `--junitxml` file (no Bazel directory around it)."""
    out = Results()
    try:
        cases, suite, _, problem = parse_junit(path, is_test_file, max_xml_bytes)
    except OSError as exc:
        out.problems.append(Problem(str(path), f"unreadable: {exc}"))
        return out
    if problem:
        out.problems.append(Problem(str(path), problem))
    out.runs.append(Run(str(path), suite))
    out.cases = cases
    return out


def _result_dirs(root: Path) -> Iterator[Path]:
    """Directories holding test.xml or test.log, and loose *.xml files (plain JUnit), under `root`."""
    for current, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("test.outputs") and not d.startswith("."))
        here = Path(current)
        if "test.xml" in filenames or "test.log" in filenames:
            yield here
        for name in sorted(filenames):
            if name.endswith(".xml") and name != "test.xml":
                yield here / name


def read_results(paths: Iterable[Path], is_test_file: PathCheck | None = None, **limits: int) -> Results:
    """Everything under `paths`: Bazel test directories, test.xml/test.log files, JUnit files or dirs."""
    out = Results()
    for path in paths:
        if path.is_dir():
            found = False
            for item in _result_dirs(path):
                found = True
                out.extend(read_test_dir(item, is_test_file, **limits) if item.is_dir()
                           else read_junit_file(item, is_test_file, max_xml_bytes=limits.get("max_xml_bytes",
                                                                                              MAX_XML_BYTES)))
            if not found:
                out.problems.append(Problem(str(path), "no test.xml, test.log or JUnit *.xml found"))
        elif path.name == "test.log" or (path.name == "test.xml" and (path.parent / "test.log").exists()):
            out.extend(read_test_dir(path.parent, is_test_file, **limits))
        elif path.is_file():
            out.extend(read_junit_file(path, is_test_file, max_xml_bytes=limits.get("max_xml_bytes", MAX_XML_BYTES)))
        else:
            out.problems.append(Problem(str(path), "no such file or directory"))
    return out
