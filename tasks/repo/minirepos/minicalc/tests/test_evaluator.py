import pytest

from minicalc import evaluate


def test_precedence():
    assert evaluate("2 + 3 * 4") == 14


def test_parentheses():
    assert evaluate("(2 + 3) * 4") == 20


def test_subtraction_is_left_associative():
    assert evaluate("10 - 4 - 3") == 3


def test_division_is_left_associative():
    assert evaluate("64 / 4 / 2") == 8


def test_power_is_right_associative():
    assert evaluate("2 ^ 3 ^ 2") == 512


def test_unary_minus():
    assert evaluate("-3 + 5") == 2


def test_variables():
    assert evaluate("2 * (x + 1)", {"x": 3}) == 8


def test_unknown_variable():
    with pytest.raises(NameError):
        evaluate("y + 1")


def test_division_by_zero():
    with pytest.raises(ZeroDivisionError):
        evaluate("1 / (2 - 2)")


def test_trailing_tokens():
    with pytest.raises(SyntaxError):
        evaluate("1 2")
