"""The strict math verifier: final answer from the answer section only, no hedging, exact
comparison (fast path without sympy for common answers), and a CPU-time budget on the
symbolic path, so a verdict does not depend on machine load.

    verify_math(completion, gold, answer_format="boxed", timeout=1.0, on_timeout="zero")
        -> MathVerdict
    verify_batch(completions, golds, ...) -> list[MathVerdict]   # one worker round trip
    check_gold(gold)  # ValueError for a gold that cannot be scored
    warm_up()         # start the symbolic workers now (e.g. when a scoring process starts)
"""

from rlvr_envs.verify.math.deadline import warm_up
from rlvr_envs.verify.math.verdict import REASONS, MathVerdict
from rlvr_envs.verify.math.verifier import (
    ON_TIMEOUT,
    check_gold,
    extract_answer,
    verify_batch,
    verify_math,
)

__all__ = ["ON_TIMEOUT", "REASONS", "MathVerdict", "check_gold", "extract_answer",
           "verify_batch", "verify_math", "warm_up"]
