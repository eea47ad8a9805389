"""Experiment 1: SFT (expert iteration), then RL (GRPO), on rlvr/Arithmetic-v0 with its own
prompts. Held-out reward is measured with `rlvr eval` (greedy, tasks never trained on) before
training, after expert iteration and after GRPO, for each seed.

Run (full): .venv/bin/python experiments/exp1_sft_then_rl.py --model smollm2-135m
Quick:      .venv/bin/python experiments/exp1_sft_then_rl.py --model tiny
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CLAIM = ("Rejection-sampled fine-tuning on verified samples teaches the answer format, and RL "
         "then raises held-out reward further.")


def main() -> None:
    p = common.parser(__doc__.splitlines()[0], "exp1_sft_then_rl")
    p.add_argument("--train-tasks", type=int, default=64)
    p.add_argument("--eval-tasks", type=int, default=32)
    p.add_argument("--ei-rounds", type=int, default=2)
    p.add_argument("--samples-per-task", type=int, default=8)
    p.add_argument("--grpo-steps", type=int, default=20)
    p.add_argument("--max-completion-length", "--max-new-tokens", type=int, default=96)
    p.add_argument("--sft-lr", type=float, default=5e-5)
    p.add_argument("--rl-lr", type=float, default=2e-5)
    p.add_argument("--sft-epochs", type=float, default=4.0,
                   help="fine-tuning epochs per expert-iteration round")
    p.add_argument("--sft-batch-size", type=int, default=4)
    p.add_argument("--temperature", type=float, default=1.0,
                   help="sampling temperature of expert iteration and GRPO")
    args = p.parse_args()
    from rlvr_envs.agents.expert_iteration import ExpertIterationSettings, train_expert_iteration
    from rlvr_envs.agents.grpo import GRPOSettings, log_series, train_grpo
    from rlvr_envs.agents.run_dir import RunDir

    started = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = json.loads(args.env_kwargs)
    per_seed = {}
    config = {k: v for k, v in vars(args).items() if k not in ("out", "seeds")}
    for seed in args.seeds:
        # a seed finished by an earlier invocation with the same settings is not rerun
        done = out / f"seed-{seed}.json"
        if done.exists() and json.loads(done.read_text()).get("config") == config:
            per_seed[seed] = json.loads(done.read_text())["result"]
            continue
        start = common.start_model(args.model, out, env_kwargs, seed,
                                   warmup_epochs=args.tiny_warmup_epochs,
                                   train_tasks=args.train_tasks, eval_tasks=args.eval_tasks)
        suite = common.held_out_suite(out, env_kwargs, seed, args.train_tasks, args.eval_tasks,
                                      args.max_completion_length)
        evals = out / "evals"
        before = common.rlvr_eval(start, suite, evals, f"before-s{seed}")
        ei = train_expert_iteration(ExpertIterationSettings(
            env_id=common.ENV_ID, env_kwargs=env_kwargs, model=start,
            output_dir=str(out / f"ei-s{seed}"), train_tasks=args.train_tasks, eval_tasks=0,
            rounds=args.ei_rounds, samples_per_task=args.samples_per_task,
            max_completion_length=args.max_completion_length, learning_rate=args.sft_lr,
            seed=seed, sft_epochs=args.sft_epochs, batch_size=args.sft_batch_size,
            temperature=args.temperature, device=args.device))
        sft_path = str(Path(ei["run_dir"]) / "final")
        after_sft = common.rlvr_eval(sft_path, suite, evals, f"after-sft-s{seed}")
        grpo_dir = out / f"grpo-s{seed}"
        train_grpo(GRPOSettings(
            env_id=common.ENV_ID, env_kwargs=env_kwargs, model=sft_path,
            output_dir=str(grpo_dir), train_tasks=args.train_tasks, eval_tasks=0,
            max_steps=args.grpo_steps, prompts_per_step=4, num_generations=8,
            max_completion_length=args.max_completion_length, learning_rate=args.rl_lr,
            temperature=args.temperature, save_steps=max(args.grpo_steps, 1), seed=seed,
            device=args.device))
        after_rl = common.rlvr_eval(str(grpo_dir / "final"), suite, evals, f"after-rl-s{seed}")
        per_seed[seed] = {"before": before, "after_sft": after_sft, "after_rl": after_rl,
                          "ei_log": RunDir(ei["run_dir"]).read_log(),
                          "grpo_reward": log_series(grpo_dir, "reward"),
                          "grpo_skipped_frac": log_series(grpo_dir, "skipped_frac")}
        done.write_text(json.dumps({"config": config, "result": per_seed[seed]}, default=str))
    stages = ("before", "after_sft", "after_rl")
    summary = {stage: common.stats([per_seed[s][stage]["accuracy"] for s in per_seed])
               for stage in stages}
    config["seeds"] = args.seeds
    common.write_results(out, "exp1_sft_then_rl", CLAIM, config, per_seed, summary, started)

    fig, (bars, curve) = common.figure(2)
    means = [summary[s]["mean"] for s in stages]
    bars.bar(range(3), means, yerr=[summary[s]["std"] for s in stages], capsize=4,
             color=["#999999", "#1f77b4", "#2ca02c"])
    for i, stage in enumerate(stages):
        bars.scatter([i] * len(per_seed), summary[stage]["values"], color="black", s=12, zorder=3)
    bars.set_xticks(range(3), ["before", "after SFT (EI)", "after GRPO"])
    bars.set_ylabel("held-out accuracy (rlvr eval, greedy)")
    common.plot_curves(curve, {"GRPO": [per_seed[s]["grpo_reward"] for s in per_seed]},
                       "train reward")
    common.save_figure(fig, out, f"{args.model} on {common.ENV_ID} {env_kwargs}, "
                       f"{len(per_seed)} seed(s)")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
