"""Experiment 3: the Kimi k1.5 group length penalty. The same GRPO run with and without
`KimiGroupPenalty` (through `group_rewards`, its warm-up fed the training step): mean completion
length and accuracy at the end.

Run (full): .venv/bin/python experiments/exp3_kimi_length_penalty.py --model CHECKPOINT
Quick:      .venv/bin/python experiments/exp3_kimi_length_penalty.py --model tiny
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CLAIM = ("The Kimi k1.5 length penalty shortens completions at little or no cost in accuracy.")


def main() -> None:
    p = common.grpo_parser(__doc__.splitlines()[0], "exp3_kimi_length_penalty")
    p.add_argument("--penalty-weight", type=float, default=0.5)
    p.add_argument("--warmup-steps", type=int, default=0)
    args = p.parse_args()
    started = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = json.loads(args.env_kwargs)
    penalty = (f'rlvr_envs.rewards.trl:KimiGroupPenalty{{"weight": {args.penalty_weight}, '
               f'"warmup_steps": {args.warmup_steps}}}')
    arms = {"no penalty": [], "kimi penalty": [penalty]}
    per_seed: dict[int, dict] = {}
    for seed in args.seeds:
        start = common.start_model(args.model, out, env_kwargs, seed,
                                   warmup_epochs=args.tiny_warmup_epochs,
                                   train_tasks=args.train_tasks, eval_tasks=args.eval_tasks)
        per_seed[seed] = {arm: common.grpo_arm(start, out / f"{arm.replace(' ', '-')}-s{seed}",
                                               env_kwargs, seed, args, group_rewards=specs,
                                               loss_type="grpo", zero_variance_groups="keep")
                          for arm, specs in arms.items()}
    summary = common.arm_summary(per_seed, arms)
    config = {k: v for k, v in vars(args).items() if k != "out"}
    common.write_results(out, "exp3_kimi_length_penalty", CLAIM, config, per_seed, summary,
                         started)
    common.plot_length_and_accuracy(
        out, per_seed, arms, f"{args.model}: Kimi length penalty, {len(per_seed)} seed(s)",
        "train accuracy (correctness)")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
