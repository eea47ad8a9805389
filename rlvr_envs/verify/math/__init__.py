"""The strict math verifier: final answer from the answer section only, no hedging, exact
comparison (fast path without sympy for common answers), and a hard deadline on every call.

    verify_math(completion, gold, answer_format="boxed", timeout=1.0) -> MathVerdict
    check_gold(gold)  # ValueError for a gold that cannot be scored
"""

from rlvr_envs.verify.math.deadline import warm_up
from rlvr_envs.verify.math.verdict import REASONS, MathVerdict
from rlvr_envs.verify.math.verifier import check_gold, extract_answer, verify_math

__all__ = ["REASONS", "MathVerdict", "check_gold", "extract_answer", "verify_math", "warm_up"]
