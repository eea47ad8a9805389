"""Split an expression into number, name, operator and parenthesis tokens."""

from __future__ import annotations

from dataclasses import dataclass

OPERATORS = "+-*/^%"


@dataclass(frozen=True)
class Token:
    kind: str  # "number" | "name" | "op" | "lparen" | "rparen"
    text: str
    position: int


def tokenize(source: str) -> list[Token]:
    tokens: list[Token] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char.isspace():
            i += 1
        elif char.isdigit() or char == ".":
            start = i
            while i < len(source) and (source[i].isdigit() or source[i] == "."):
                i += 1
            tokens.append(Token("number", source[start:i], start))
        elif char.isalpha() or char == "_":
            start = i
            while i < len(source) and (source[i].isalnum() or source[i] == "_"):
                i += 1
            tokens.append(Token("name", source[start:i], start))
        elif char in OPERATORS:
            tokens.append(Token("op", char, i))
            i += 1
        elif char == "(":
            tokens.append(Token("lparen", char, i))
            i += 1
        elif char == ")":
            tokens.append(Token("rparen", char, i))
            i += 1
        else:
            raise SyntaxError(f"unexpected character {char!r} at position {i}")
    return tokens
