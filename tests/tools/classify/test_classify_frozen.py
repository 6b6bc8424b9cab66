"""tools/classify/frozen.py: `@frozen` records are immutable, hashable, picklable dataclasses."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from tools.classify.frozen import frozen


@frozen
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@frozen
class Bag:
    items: list[int] = dataclasses.field(default_factory=list)


def test_same_behaviour_as_a_frozen_dataclass() -> None:
    p = Point(1, tags=("a",))
    assert (p.x, p.y, p.tags) == (1, 0, ("a",))
    assert p == Point(1, 0, ("a",)) and hash(Point(2)) == hash(Point(2)) and p != Point(2)
    assert repr(Point(3)) == "Point(x=3, y=0, tags=())"
    assert Bag().items == [] and Bag().items is not Bag().items and Bag([1]).items == [1]  # a factory per call
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(p)) == p  # results cross process boundaries
    assert dataclasses.is_dataclass(Point) and [f.name for f in dataclasses.fields(Point)] == ["x", "y", "tags"]


def test_argument_errors_as_usual() -> None:
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, (), 5)  # type: ignore[call-arg]

