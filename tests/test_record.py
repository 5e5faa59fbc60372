"""`Record`: the value classes on `yarp run`'s path (construction, immutability, pickling)."""

from __future__ import annotations

import pickle

import pytest

from yarp._record import Record


class Point(Record):
    __slots__ = ("x", "y", "label")
    _defaults = {"label": None}


@pytest.mark.parametrize("build", [
    lambda: Point(1, 2, "p"),                   # every field by position
    lambda: Point(x=1, y=2, label="p"),         # every field by name
    lambda: Point(1, label="p", y=2),           # mixed
    lambda: Point(label="p", y=2, x=1),         # by name, any order
])
def test_every_construction_form_gives_the_same_value(build):
    point = build()
    assert (point.x, point.y, point.label) == (1, 2, "p")
    assert point == Point(1, 2, "p") and hash(point) == hash(Point(1, 2, "p"))


def test_defaults_fill_trailing_fields():
    assert Point(1, 2).label is None
    assert Point(x=1, y=2).label is None


@pytest.mark.parametrize("build, message", [
    (lambda: Point(1, 2, "p", 4), "at most 3"),
    (lambda: Point(1, x=1, y=2), "'x'"),
    (lambda: Point(1), "'y'"),
])
def test_wrong_arguments_are_named(build, message):
    with pytest.raises(TypeError, match=message):
        build()


def test_all_names_given_but_one_unknown_is_refused():
    # As many keywords as fields, one of them unknown: the fast path must not accept it.
    with pytest.raises(TypeError, match="'colour'"):
        Point(x=1, y=2, colour="red")


def test_records_are_immutable_and_pickle():
    point = Point(1, 2)
    with pytest.raises(AttributeError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.y
    assert pickle.loads(pickle.dumps(point)) == point
    assert point.replace(label="q") == Point(1, 2, "q")
