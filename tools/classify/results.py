"""What the analysis of one test file gives: its tests' verdicts.

Kept apart from the analysis (analyzer.py) because the cache, the merge into the classification file and the
reports read results without analysing anything: a warm run, an unchanged tree, loads none of the interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.classify.evidence import Verdict


@dataclass
class FileResult:
    rel: str
    torch: bool
    tests: dict[str, Verdict]
    error: str | None = None
    deps: list[str] = field(default_factory=list)
    # (data file, state) for the data files its analysis read (datafiles.py): the result is reused only while
    # each is in that state
    data: list[tuple[str, str]] = field(default_factory=list)
    # a file without tests whose import needs a GPU (`BUF = torch.zeros(4).cuda()` at its top level): pytest
    # imports it to collect, and the collection error fails its target on a CPU runner, so the file is `gpu`
    import_needs_gpu: Verdict | None = None
