"""Runtime feedback loop: reclassify tests from CPU runs, measured VRAM, pytest markers, convergence.

See docs/feedback.md. Entry point: `python3 -m tools.feedback` (or `bazel run //tools:classify --
--from-results ...`, `bazel run //tools:converge`).
"""
