"""Put the repository root on sys.path so `tools.locks` imports without an installed package.

Why: pyproject's `pythonpath = ["."]` does this once it exists; until then (and under runners that do
not read it) this keeps `pytest tests/tools/locks` working from any directory.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
