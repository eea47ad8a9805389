"""A precedence-climbing parser that evaluates as it parses."""

from __future__ import annotations

from typing import Mapping

from minicalc.lexer import Token, tokenize

# operator -> (precedence, right associative)
BINARY = {"+": (1, False), "-": (1, False), "*": (2, False), "/": (2, False),
          "%": (2, False), "^": (3, True)}


class _Parser:
    def __init__(self, tokens: list[Token], variables: Mapping[str, float]):
        self.tokens, self.variables, self.index = tokens, variables, 0

    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise SyntaxError("unexpected end of expression")
        self.index += 1
        return token

    def expression(self, min_precedence: int = 1) -> float:
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token.kind != "op" or BINARY[token.text][0] < min_precedence:
                return left
            precedence, right_assoc = BINARY[token.text]
            self.take()
            next_min = precedence if right_assoc else precedence + 1
            right = self.expression(next_min)
            left = apply(token.text, left, right)

    def unary(self) -> float:
        token = self.peek()
        if token is not None and token.kind == "op" and token.text == "-":
            self.take()
            return -self.unary()
        return self.atom()

    def atom(self) -> float:
        token = self.take()
        if token.kind == "number":
            return float(token.text)
        if token.kind == "name":
            if token.text not in self.variables:
                raise NameError(f"unknown variable {token.text!r}")
            return float(self.variables[token.text])
        if token.kind == "lparen":
            value = self.expression()
            closing = self.take()
            if closing.kind != "rparen":
                raise SyntaxError(f"expected ')' at position {closing.position}")
            return value
        raise SyntaxError(f"unexpected {token.text!r} at position {token.position}")


def apply(op: str, left: float, right: float) -> float:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op == "/":
        if right == 0:
            raise ZeroDivisionError("division by zero")
        return left / right
    if op == "%":
        return left % right
    return left ** right


def evaluate(source: str, variables: Mapping[str, float] | None = None) -> float:
    """The value of `source`, e.g. evaluate("2 * (x + 1)", {"x": 3}) == 8.0."""
    parser = _Parser(tokenize(source), variables or {})
    value = parser.expression()
    if parser.peek() is not None:
        extra = parser.peek()
        raise SyntaxError(f"unexpected {extra.text!r} at position {extra.position}")
    return value
