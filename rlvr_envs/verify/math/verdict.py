"""The verdict of the math verifier, its reasons, and the input caps applied before parsing."""

from __future__ import annotations

from dataclasses import dataclass

CORRECT = "correct"
MISMATCH = "mismatch"
NO_ANSWER = "no_answer"
HEDGED = "hedged"
TIMEOUT = "timeout"
TOO_LONG = "too_long"
ERROR = "error"

REASONS = (CORRECT, MISMATCH, NO_ANSWER, HEDGED, TIMEOUT, TOO_LONG, ERROR)
MATH_REASONS = (CORRECT, MISMATCH, HEDGED)  # the reasons a comparison itself can give

# Caps checked before any parsing: a completion longer than this is not read at all; an
# extracted answer (or gold) longer than this, nested deeper, or a completion boxing more
# answers than this, is refused without reaching sympy.
MAX_COMPLETION_CHARS = 1_000_000
MAX_ANSWER_CHARS = 1_000
MAX_NESTING = 24
MAX_ANSWERS = 32


@dataclass(frozen=True)
class MathVerdict:
    """`correct` is the reward decision (None: no decision, a timeout with on_timeout="none");
    `reason` one of REASONS; `extracted` the final answer read."""

    correct: bool | None
    reason: str
    extracted: str | None = None

    @property
    def reward(self) -> float | None:
        """1.0, 0.0, or None when the verifier abstains (TRL leaves such a sample out)."""
        return None if self.correct is None else float(self.correct)
