"""How long a completion is: tokens when a tokenizer is given, else characters.

Every length-based piece (Kimi length penalty, DAPO overlong punishment, thinking budget,
the length-at-cap monitor) measures through `measure_length`, so all of them agree on units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Union

#: a Hugging Face tokenizer (anything with `.encode(text)`), or a callable text -> token count
Tokenizer = Union[Any, Callable[[str], int]]


def measure_length(text: str, tokenizer: Tokenizer | None = None) -> int:
    """Length of `text` in tokens (with a tokenizer) or characters (without)."""
    if tokenizer is None:
        return len(text)
    encode = getattr(tokenizer, "encode", None)
    if encode is not None:
        try:
            return len(encode(text, add_special_tokens=False))
        except TypeError:  # tokenizers without the keyword (tiktoken-style)
            return len(encode(text))
    if callable(tokenizer):
        return int(tokenizer(text))
    raise TypeError(f"tokenizer must have .encode(text) or be a callable text -> int, "
                    f"got {type(tokenizer).__name__}")


def measure_lengths(texts: Sequence[str], tokenizer: Tokenizer | None = None,
                    token_ids: Sequence[Sequence[int]] | None = None) -> list[int]:
    """Lengths of many texts; `token_ids` (e.g. TRL's `completion_ids`) win when given."""
    if token_ids is not None:
        if len(token_ids) != len(texts):
            raise ValueError(f"got {len(token_ids)} token id lists for {len(texts)} completions")
        return [len(ids) for ids in token_ids]
    return [measure_length(t, tokenizer) for t in texts]
