"""`@frozen`: the stock `@dataclass(frozen=True)`, the one spelling of an immutable record here.

Its `__init__` was once generated with `exec` to fill `__dict__` directly (the stock frozen `__init__`
goes through `object.__setattr__` per field). Measured with bench/bench_classify.py on 2026-12-01, cold,
one process, best of 3: torchsde 1.43 s CPU either way, gpytorch 10.36 s (generated) vs 10.27 s (stock);
under the 5 % a speed trick must pay to stay, so the plain version is back.
"""

from __future__ import annotations

import dataclasses

frozen = dataclasses.dataclass(frozen=True)
