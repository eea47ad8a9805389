"""Experiment 4: difficulty filtering. Pass rates of the starting model are measured with
`rlvr difficulty estimate`; GRPO then trains on the tasks inside the solvability range
(0, 1) against the same pool unfiltered: reward gained per step and the fraction of groups
with zero reward variance.

Run (full): .venv/bin/python experiments/exp4_difficulty_filtering.py --model CHECKPOINT
Quick:      .venv/bin/python experiments/exp4_difficulty_filtering.py --model tiny
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CLAIM = ("Training only on tasks the model sometimes but not always solves wastes fewer groups "
         "on zero reward variance and gains reward faster per step.")


def estimate_pass_rates(model: str, out: Path, env_kwargs: dict, seed: int, args) -> Path:
    """`rlvr difficulty estimate` over the reset seeds the trainer's training split draws."""
    path = out / f"pass-rates-s{seed}.json"
    rlvr = Path(sys.executable).with_name("rlvr")
    cmd = [str(rlvr), "difficulty", "estimate", "--env", common.ENV_ID, "--policy", model,
           "-k", str(args.k), "--tasks", str(args.pool), "--seed", str(seed), "--out", str(path),
           "--env-kwargs", json.dumps(env_kwargs),
           "--max-completion-length", str(args.max_completion_length)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"rlvr difficulty estimate failed: {' '.join(cmd)}\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return path


def filtered_arm(start: str, run_dir: Path, env_kwargs: dict, seed: int, args, rates: Path
                 ) -> dict:
    """GRPO on the training tasks inside (0, 1); the reason instead when none is."""
    from rlvr_envs.agents.data import EnvDataError

    try:
        return common.grpo_arm(start, run_dir, env_kwargs, seed, args, pass_rates=str(rates),
                               solvable_lo=0.0, solvable_hi=1.0, zero_variance_groups="keep")
    except EnvDataError as err:
        return {"not_run": str(err)}


def main() -> None:
    p = common.grpo_parser(__doc__.splitlines()[0], "exp4_difficulty_filtering")
    p.add_argument("--k", type=int, default=8, help="samples per task for the pass rates")
    p.add_argument("--pool", type=int, default=64, help="training pool measured and filtered")
    args = p.parse_args()
    args.train_tasks = args.pool
    started = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = json.loads(args.env_kwargs)
    per_seed: dict[int, dict] = {}
    for seed in args.seeds:
        start = common.start_model(args.model, out, env_kwargs, seed,
                                   warmup_epochs=args.tiny_warmup_epochs,
                                   train_tasks=args.train_tasks, eval_tasks=args.eval_tasks)
        rates = estimate_pass_rates(start, out, env_kwargs, seed, args)
        measured = [row["pass_rate"] for row in json.loads(rates.read_text())["tasks"]]
        per_seed[seed] = {
            "unfiltered": common.grpo_arm(start, out / f"unfiltered-s{seed}", env_kwargs, seed,
                                          args, zero_variance_groups="keep"),
            "filtered": filtered_arm(start, out / f"filtered-s{seed}", env_kwargs, seed, args,
                                     rates),
            "pass_rate_file": str(rates),
            "pass_rates": {"measured": len(measured),
                           "never_solved": sum(r == 0 for r in measured),
                           "always_solved": sum(r == 1 for r in measured),
                           "in_range": sum(0 < r < 1 for r in measured)}}
    # an arm is summarised over the seeds where it ran (none of a seed's tasks in range: no run)
    ran = {arm: [s for s in per_seed if per_seed[s][arm].get("accuracy")]
           for arm in ("unfiltered", "filtered")}
    arms = [arm for arm in ran if ran[arm]]

    def gain_per_step(curve):  # mean of the last 3 steps minus mean of the first 3, per step
        return (common.tail_mean(curve) - common.tail_mean(curve[:3])) / max(len(curve) - 1, 1)

    summary = {arm: {"zero_variance_frac": common.stats([
                         sum(per_seed[s][arm]["zero_variance_frac"])
                         / len(per_seed[s][arm]["zero_variance_frac"]) for s in ran[arm]]),
                     "reward_gain_per_step": common.stats([
                         gain_per_step(per_seed[s][arm]["accuracy"]) for s in ran[arm]]),
                     "held_out_before": common.stats([
                         per_seed[s][arm]["held_out"]["before"]["reward"] for s in ran[arm]]),
                     "held_out_after": common.stats([
                         per_seed[s][arm]["held_out"]["after"]["reward"] for s in ran[arm]])}
               for arm in arms}
    config = {k: v for k, v in vars(args).items() if k != "out"}
    common.write_results(out, "exp4_difficulty_filtering", CLAIM, config, per_seed, summary,
                         started)
    fig, (reward, zero) = common.figure(2)
    common.plot_curves(reward, {arm: [per_seed[s][arm]["accuracy"] for s in ran[arm]]
                                for arm in arms}, "train accuracy")
    common.plot_curves(zero, {arm: [per_seed[s][arm]["zero_variance_frac"] for s in ran[arm]]
                              for arm in arms}, "fraction of zero-variance groups")
    common.save_figure(fig, out, f"{args.model}: difficulty filtering, {len(per_seed)} seed(s)")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
