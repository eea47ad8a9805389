import pytest

from intervals import Interval, intersect, merge, total_length


def test_invalid_interval():
    with pytest.raises(ValueError):
        Interval(3, 1)


def test_overlaps():
    assert Interval(1, 3).overlaps(Interval(3, 5))
    assert not Interval(1, 2).overlaps(Interval(3, 5))


def test_merge_overlapping():
    assert merge([Interval(5, 8), Interval(1, 3), Interval(2, 4)]) == [
        Interval(1, 4), Interval(5, 8)]


def test_merge_touching():
    assert merge([Interval(1, 3), Interval(3, 6)]) == [Interval(1, 6)]


def test_merge_nested():
    assert merge([Interval(1, 10), Interval(2, 3)]) == [Interval(1, 10)]


def test_merge_empty():
    assert merge([]) == []


def test_intersect():
    a = [Interval(0, 5), Interval(10, 15)]
    b = [Interval(3, 12)]
    assert intersect(a, b) == [Interval(3, 5), Interval(10, 12)]


def test_intersect_single_point():
    assert intersect([Interval(0, 2)], [Interval(2, 4)]) == [Interval(2, 2)]


def test_total_length():
    assert total_length([Interval(0, 2), Interval(1, 4), Interval(10, 11)]) == 5
