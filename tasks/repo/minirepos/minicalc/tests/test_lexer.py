import pytest

from minicalc import Token, tokenize


def test_numbers_and_names():
    assert [t.text for t in tokenize("12 + x_1*3.5")] == ["12", "+", "x_1", "*", "3.5"]


def test_kinds():
    assert [t.kind for t in tokenize("(a)")] == ["lparen", "name", "rparen"]


def test_positions():
    assert tokenize("  7")[0] == Token("number", "7", 2)


def test_bad_character():
    with pytest.raises(SyntaxError, match="position 2"):
        tokenize("1 $ 2")
