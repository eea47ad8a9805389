"""textstats: words, sentences and frequency tables of plain text."""

from textstats.counting import sentence_count, top_words, word_counts, words

__all__ = ["sentence_count", "top_words", "word_counts", "words"]
