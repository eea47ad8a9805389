"""minicalc: tokenize, parse and evaluate arithmetic expressions with variables."""

from minicalc.evaluator import evaluate
from minicalc.lexer import Token, tokenize

__all__ = ["Token", "evaluate", "tokenize"]
