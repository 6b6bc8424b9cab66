"""//tools/coverage: Bazel's lcov merge steps (per test and combined), including bad tracefiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.coverage import lcov_merge

RUN_A = """TN:
SF:pkg/lib.py
FN:4,9,clamp
FNDA:1,clamp
FNF:1
FNH:1
BRDA:5,0,jump to line 6,1
BRDA:5,0,jump to line 7,0
BRDA:7,0,jump to line 8,-
DA:4,1
DA:5,1
DA:6,1
DA:7,0
LH:3
LF:4
end_of_record
SF:/usr/lib/python3/os.py
DA:1,1
end_of_record
"""

RUN_B = """SF:pkg/lib.py
FN:4,9,clamp
FNDA:2,clamp
BRDA:5,0,jump to line 7,2
BRDA:7,0,jump to line 8,1
DA:5,2
DA:7,2,checksum
end_of_record
SF:pkg/other.py
DA:1,0
end_of_record
"""


def test_merge_sums_lines_branches_and_functions():
    merged = lcov_merge.merge([lcov_merge.parse(RUN_A, "a.dat"), lcov_merge.parse(RUN_B, "b.dat")])
    lib = merged["pkg/lib.py"]
    assert lib.lines == {4: 1, 5: 3, 6: 1, 7: 2}
    assert lib.branches == {(5, "0", "jump to line 6"): 1, (5, "0", "jump to line 7"): 2, (7, "0", "jump to line 8"): 1}
    assert lib.function_hits == {"clamp": 3}


def test_render_recomputes_the_summaries_and_keeps_never_reached_branches():
    text = lcov_merge.render(lcov_merge.parse(RUN_A, "a.dat"))
    lib = text.split("end_of_record")[1]  # sorted: /usr/lib/python3/os.py first
    assert "BRDA:7,0,jump to line 8,-" in lib
    assert "BRF:3\nBRH:1" in lib
    assert "FNF:1\nFNH:1" in lib
    assert lib.rstrip().endswith("LH:3\nLF:4")
    assert lcov_merge.render({}) == ""


def test_manifest_and_filters_choose_the_sources():
    files = lcov_merge.merge([lcov_merge.parse(RUN_A, "a"), lcov_merge.parse(RUN_B, "b")])
    assert set(lcov_merge.keep_sources(files, None, ["/usr/lib/.+"])) == {"pkg/lib.py", "pkg/other.py"}
    assert set(lcov_merge.keep_sources(files, {"pkg/lib.py", "pkg/BUILD"}, [])) == {"pkg/lib.py"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("DA:1,1\n", "t.dat:1: 'DA' outside an SF: record"),
        ("SF:a.py\nDA:one,1\n", "t.dat:2: malformed lcov line 'DA:one,1'"),
        ("SF:a.py\nXX:1\n", "t.dat:2: unknown lcov line 'XX:1'"),
    ],
)
def test_bad_tracefile_lines_are_named(text, message):
    with pytest.raises(lcov_merge.LcovError, match=message):
        lcov_merge.parse(text, "t.dat")


def test_output_generator_command_line(tmp_path: Path):
    coverage_dir = tmp_path / "coverage"
    (coverage_dir / "sub").mkdir(parents=True)
    (coverage_dir / "pylcov.dat").write_text(RUN_A)
    (coverage_dir / "sub" / "more.dat").write_text(RUN_B)
    (coverage_dir / "notes.txt").write_text("not a tracefile")
    manifest = tmp_path / "manifest"
    manifest.write_text("pkg/lib.py\npkg/BUILD.bazel\n")
    output = coverage_dir / "_coverage.dat"
    code = lcov_merge.main([
        f"--coverage_dir={coverage_dir}", f"--output_file={output}", "--filter_sources=/usr/lib/.+",
        f"--source_file_manifest={manifest}",
    ])
    assert code == 0
    text = output.read_text()
    assert [line for line in text.splitlines() if line.startswith("SF:")] == ["SF:pkg/lib.py"]
    assert "DA:5,3" in text and "FNDA:3,clamp" in text


def test_report_generator_command_line_and_bad_input(tmp_path: Path, capsys):
    (tmp_path / "a.dat").write_text(RUN_A)
    (tmp_path / "b.dat").write_text("SF:x.py\nDA:1\n")
    reports = tmp_path / "reports.txt"
    reports.write_text(f"{tmp_path / 'a.dat'}\n")
    output = tmp_path / "report.dat"
    assert lcov_merge.main([f"--reports_file={reports}", f"--output_file={output}"]) == 0
    assert "SF:pkg/lib.py" in output.read_text()

    reports.write_text(f"{tmp_path / 'a.dat'}\n{tmp_path / 'b.dat'}\n")
    assert lcov_merge.main([f"--reports_file={reports}", f"--output_file={output}"]) == 1
    assert f"{tmp_path / 'b.dat'}:2: malformed lcov line 'DA:1'" in capsys.readouterr().err
    assert "SF:pkg/lib.py" in output.read_text()  # the earlier report is left intact

    with pytest.raises(SystemExit):
        lcov_merge.main([f"--output_file={output}"])
    assert "exactly one of --coverage_dir" in capsys.readouterr().err
