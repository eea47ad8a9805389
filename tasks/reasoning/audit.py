"""The null=0 / gold=1 / no-padding audit of reasoning-gym's generators under our scoring.

For each generator and a few seeds per level: the gold completion must score 1, an empty answer,
a padded gold ("<gold> 7"), a prefixed gold ("x <gold>"), a hedge ("<gold> or 12"), the gold's
first character, zero and NaN must score 0, and the same seed must give the same task twice.
Separately it records whether the generator's own `score_answer` ever gives 1.0 to one of
those wrong variants: only generators where it never does may use it (see scoring.STRICT_OWN_SCORERS, kept in audit.json).

`python -m rlvr_envs.tasks.reasoning.audit` reruns it and rewrites audit.json.
"""

from __future__ import annotations

import json
import random
import signal
import sys
from typing import Any



def wrong_variants(gold: str) -> dict[str, str]:
    """Answers that are wrong for (almost) every gold. Besides padding and hedges: the gold's
    first character and zero (coin_flip's scorer paid 1.0 for "0" against 0.03125: its partial
    credit for a matching prefix reaches 1.0 when the answer is shorter than the gold), and NaN
    (its distance to anything is NaN, and `min(1.0, exp(-nan))` is 1.0 in complex_arithmetic)."""
    return {"empty": "", "padded": f"{gold} 7", "prefixed": f"x {gold}",
            "hedged": f"{gold} or 12", "doubled": f"{gold}\n{gold}0",
            "first_character": gold.strip()[:1], "zero": "0", "nan": "nan",
            "nan_grouped": "(nan)", "infinite": "inf"}


def audit_generator(name: str, seeds_per_level: int = 4) -> dict[str, Any]:
    """Audit one generator; returns counts and the reason it fails, if it does."""
    from rlvr_envs.core.task import Task
    from rlvr_envs.tasks.reasoning.scoring import ReasoningGymScorer
    from rlvr_envs.tasks.reasoning.source import entry_for, reasoning_gym_source

    result: dict[str, Any] = {"tasks": 0, "gold_ok": 0, "wrong_zero": 0, "wrong_total": 0,
                              "own_scorer_strict": True, "deterministic": True}
    try:
        source = reasoning_gym_source(name)  # the default levels that its curriculum allows
        result["levels"] = list(source.levels)
        scorer = ReasoningGymScorer("r1")
        rng = random.Random(name)
        for level in source.levels:
            for _ in range(seeds_per_level):
                seed = rng.randrange(2**31 - 1)
                task = source.make(name, level, seed)
                again = source.make(name, level, seed)
                if (task.prompt, task.answer) != (again.prompt, again.answer):
                    result["deterministic"] = False
                result["tasks"] += 1
                if scorer.score(task, scorer.gold_completion(task)).reward == 1.0:
                    result["gold_ok"] += 1
                meta = task.metadata
                dataset, entry = entry_for(name, meta["rg_seed"], meta["rg_level"], meta["rg_config"])
                for variant in wrong_variants(task.answer).values():
                    if variant.strip() == task.answer.strip():
                        continue
                    result["wrong_total"] += 1
                    completion = f"<think>hmm</think><answer>{variant}</answer>"
                    plain = Task(prompt=task.prompt, answer=task.answer, family="reasoning")
                    if scorer.score(plain, completion).reward == 0.0:
                        result["wrong_zero"] += 1
                    try:  # unguarded: the variants are ours, and a guarded lax scorer
                        # (one that evals) would look strict only because it is refused
                        if dataset.score_answer(variant, entry) == 1.0:
                            result["own_scorer_strict"] = False
                    except Exception:
                        pass
    except Exception as err:  # a generator that cannot even make a task is left out with why
        result["error"] = f"{type(err).__name__}: {str(err)[:160]}"
    result["passes"] = ("error" not in result and result["tasks"] > 0
                        and result["gold_ok"] == result["tasks"]
                        and result["wrong_zero"] == result["wrong_total"]
                        and result["deterministic"])
    return result


def main(argv: list[str] | None = None) -> int:
    from rlvr_envs.tasks.reasoning.scoring import AUDIT_FILE, load_audit
    from rlvr_envs.tasks.reasoning.source import generator_names

    names = (argv if argv else None) or generator_names()
    results = load_audit()

    def _timeout(*_: Any) -> None:
        raise TimeoutError("audit took over 60 s")

    signal.signal(signal.SIGALRM, _timeout)
    for name in names:
        signal.alarm(60)
        try:
            results[name] = audit_generator(name)
        except TimeoutError as err:
            results[name] = {"passes": False, "error": str(err)}
        finally:
            signal.alarm(0)
        r = results[name]
        print(f"{name:28s} {'PASS' if r['passes'] else 'fail'} "
              f"gold {r.get('gold_ok')}/{r.get('tasks')} wrong->0 "
              f"{r.get('wrong_zero')}/{r.get('wrong_total')} "
              f"own-strict {r.get('own_scorer_strict')} {r.get('error', '')}", flush=True)
    AUDIT_FILE.write_text(json.dumps(dict(sorted(results.items())), indent=1) + "\n")
    passed = sum(1 for r in results.values() if r["passes"])
    print(f"{passed}/{len(results)} generators pass the audit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
