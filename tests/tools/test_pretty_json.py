"""tools/pretty_json.py writes exactly what json.dumps(indent=2, sort_keys=True) writes (the classification
file and the JSON report are compared byte for byte across runs and against checked-in files)."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import pytest

from tools import pretty_json

REPO = Path(__file__).resolve().parents[2]

SAMPLES = [
    {}, [], "text", 3, None, True, 2.5,
    {"a": [], "b": {}, "c": [[]], "d": [{}]},
    {"b": 1, "a": [1, 2.5, None, True, False, -0.0, 1e100, 10**30, float("nan"), float("inf"), -float("inf")]},
    {"é": "ü\n\"q\"\\", "ctl": ["\x00\t\u2028"], "emoji": "\U0001f600"},
    {"t": (1, "a", ()), "nested": {"z": [{"y": [1, {"x": "deep"}]}]}},
    OrderedDict(b=1, a=(2,)), [(), ((),), ["a", ["b"]]],
]


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_same_text_as_the_standard_library(ensure_ascii: bool) -> None:
    for sample in SAMPLES:
        expected = json.dumps(sample, indent=2, sort_keys=True, ensure_ascii=ensure_ascii)
        assert pretty_json.dumps(sample, ensure_ascii=ensure_ascii) == expected, sample


def test_the_checked_in_classification_file_round_trips() -> None:
    text = (REPO / "torch_classification.json").read_text(encoding="utf-8")
    assert pretty_json.dumps(json.loads(text), ensure_ascii=False) + "\n" == text


@pytest.mark.parametrize("bad", [{1: "int key"}, {"a": object()}, [{1, 2}]])
def test_what_json_cannot_write_is_refused(bad: object) -> None:
    with pytest.raises(TypeError):
        pretty_json.dumps(bad)
