import pytest

from textstats import sentence_count, top_words, word_counts, words


def test_words():
    assert words("It's a Test, a test!") == ["it's", "a", "test", "a", "test"]


def test_words_keep_case():
    assert words("Hi there", lowercase=False) == ["Hi", "there"]


def test_word_counts():
    assert word_counts("b a b")["b"] == 2


def test_top_words_order_and_ties():
    text = "pear apple pear fig apple kiwi pear"
    assert top_words(text, 3) == [("pear", 3), ("apple", 2), ("fig", 1)]


def test_top_words_n_larger_than_vocabulary():
    assert top_words("a b", 5) == [("a", 1), ("b", 1)]


def test_top_words_zero():
    assert top_words("a b", 0) == []


def test_top_words_negative():
    with pytest.raises(ValueError):
        top_words("a", -1)


def test_sentence_count():
    assert sentence_count("One. Two! Three?! Four") == 4


def test_sentence_count_empty():
    assert sentence_count("   ") == 0
