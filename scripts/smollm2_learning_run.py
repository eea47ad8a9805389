"""The documented SmolLM2-135M learning run: GRPO on CPU raises held-out reward on an easy env.

The env ("rlvr-demo/BoxedSum-v0", registered here) is one-digit arithmetic from the math
family's own generator, scored by the math family's strict MathScorer (answer inside \\boxed{}),
with the format asked for in the user turn too: the embedded Q4_1 SmolLM2-135M almost never
writes \\boxed{} on rlvr/Arithmetic-v0's prompts (0 of 32 samples), so GRPO would see no signal
there; here it answers correctly in about 1 sample of 30, enough to learn from.

Run: .venv/bin/python scripts/smollm2_learning_run.py [OUTPUT_DIR] [MAX_STEPS]
Prints held-out reward (greedy, 32 tasks never trained on) before and after.
"""

from __future__ import annotations

import json
import random
import sys
import time

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.sources import Generated, ProceduralSource
from rlvr_envs.registry import register_env
from rlvr_envs.tasks.math.generators import arithmetic
from rlvr_envs.tasks.math.scoring import MathScorer

SYSTEM = "Give only the final answer inside \\boxed{}, e.g. \\boxed{42}."


def boxed_sum(rng: random.Random, level: int) -> Generated:
    made = arithmetic(rng, level)
    expression = made.metadata["expression"]
    return Generated(f"{expression} = ? Put the number in \\boxed{{}}.", made.answer,
                     made.metadata)


def make_env() -> SingleTurnEnv:
    source = ProceduralSource({"boxed_sum": boxed_sum}, family="math", name="boxed-sum",
                              levels=(1,))
    return SingleTurnEnv(source, MathScorer("boxed"), SYSTEM)


register_env("rlvr-demo/BoxedSum-v0", make_env, "one-digit sums, answer in \\boxed{}",
             family="math")


def main() -> None:
    from rlvr_envs.agents.grpo import GRPOSettings, log_series, train_grpo

    output = sys.argv[1] if len(sys.argv) > 1 else "runs/smollm2-boxed-sum"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    settings = GRPOSettings(env_id="rlvr-demo/BoxedSum-v0", model="smollm2-135m",
                            output_dir=output, train_tasks=128, eval_tasks=32, max_steps=steps,
                            prompts_per_step=4, num_generations=8, max_completion_length=24,
                            learning_rate=3e-5, temperature=1.0, loss_type="dapo",
                            save_steps=10, seed=0, device="auto")
    start = time.time()
    result = train_grpo(settings)
    rewards = log_series(output, "reward")
    print(json.dumps({"wall_s": round(time.time() - start), "steps": result["steps"],
                      "held_out": result["eval"],
                      "train_reward_first5": sum(rewards[:5]) / max(len(rewards[:5]), 1),
                      "train_reward_last5": sum(rewards[-5:]) / max(len(rewards[-5:]), 1)},
                     indent=2))


if __name__ == "__main__":
    main()
