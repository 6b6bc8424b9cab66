"""Code under test for `bazel coverage` (tests/e2e/test_protocol.py): one branch taken, one not."""


def clamp(value: int, low: int, high: int) -> int:
    if value < low:
        return low
    if value > high:
        return high
    return value


def never_called() -> int:
    return 0
