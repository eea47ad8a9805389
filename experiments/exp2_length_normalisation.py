"""Experiment 2: completion length under GRPO's per-sequence length normalisation
(`loss_type="grpo"`) against Dr. GRPO (`"dr_grpo"`, no per-sequence normalisation): the same
env, seeds and budget; completion length and accuracy over the steps.

Run (full): .venv/bin/python experiments/exp2_length_normalisation.py --model CHECKPOINT
Quick:      .venv/bin/python experiments/exp2_length_normalisation.py --model tiny
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CLAIM = ("Per-sequence length normalisation (GRPO) lets wrong answers grow longer; Dr. GRPO, "
         "without it, keeps lengths flatter at the same accuracy.")
ARMS = ("grpo", "dr_grpo")


def main() -> None:
    args = common.grpo_parser(__doc__.splitlines()[0], "exp2_length_normalisation").parse_args()
    started = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = json.loads(args.env_kwargs)
    per_seed: dict[int, dict] = {}
    for seed in args.seeds:
        start = common.start_model(args.model, out, env_kwargs, seed,
                                   warmup_epochs=args.tiny_warmup_epochs,
                                   train_tasks=args.train_tasks, eval_tasks=args.eval_tasks)
        per_seed[seed] = {arm: common.grpo_arm(start, out / f"{arm}-s{seed}", env_kwargs, seed,
                                               args, loss_type=arm,
                                               zero_variance_groups="keep")
                          for arm in ARMS}
    summary = common.arm_summary(per_seed, ARMS, growth=True)
    config = {k: v for k, v in vars(args).items() if k != "out"}
    common.write_results(out, "exp2_length_normalisation", CLAIM, config, per_seed, summary,
                         started)
    common.plot_length_and_accuracy(out, per_seed, ARMS,
                                    f"{args.model}: grpo vs dr_grpo, {len(per_seed)} seed(s)")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
