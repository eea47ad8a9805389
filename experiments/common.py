"""What the four experiments share: the command line, the starting model, held-out evaluation
through `rlvr eval`, statistics over seeds, the results file and the plot.

Models: `smollm2-135m` (the embedded SmolLM2-135M-Instruct), any checkpoint folder, or `tiny`:
the offline random Qwen2 of the tests (hidden 64, a tokenizer trained on the env's own text),
first fit for a few epochs to gold completions of tasks outside the train and held-out sets so
that it starts with the low, non-zero pass rate a pretrained model brings. The tiny model is
for quick runs and the smoke test; it is a stand-in, not evidence about pretrained models.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

ENV_ID = "rlvr/Arithmetic-v0"
ENV_KWARGS = {"difficulty": 1}
ROOT = Path(__file__).resolve().parent.parent


def parser(description: str, name: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--model", default="smollm2-135m",
                   help="smollm2-135m, a checkpoint folder, or 'tiny' (see experiments/common.py)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--out", default=str(ROOT / "experiments" / "results" / name),
                   help="folder for runs, results.json and plot.png")
    p.add_argument("--env-kwargs", default=json.dumps(ENV_KWARGS), help="gym.make kwargs (JSON)")
    p.add_argument("--device", default="auto")
    p.add_argument("--tiny-warmup-epochs", type=float, default=8.0,
                   help="epochs of the tiny model's fit to gold completions")
    return p


def command_line() -> str:
    return " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])


def start_model(model: str, out: Path, env_kwargs: dict, seed: int, *, train_tasks: int,
                eval_tasks: int, warmup_tasks: int = 96, warmup_epochs: float = 8.0) -> str:
    """The checkpoint every arm of a seed starts from (see the module docstring for `tiny`)."""
    if model != "tiny":
        return model
    # shared by the experiments writing next to each other (same split, same warm-up)
    path = out.parent / "tiny-start" / (f"s{seed}-train{train_tasks}-eval{eval_tasks}-"
                                        f"warm{warmup_epochs:g}-" + "-".join(
                                            f"{k}{v}" for k, v in sorted(env_kwargs.items())))
    if (path / "config.json").exists():
        return str(path)
    import rlvr_envs
    from rlvr_envs.agents.data import collect_tasks, env_scorer, split_tasks, task_rows
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer
    from rlvr_envs.agents.sft import run_sft
    from rlvr_envs.agents.tiny import build_tiny_model

    env = rlvr_envs.make(ENV_ID, **env_kwargs)
    scorer = env_scorer(env, ENV_ID)
    train, held = split_tasks(env, train_tasks, eval_tasks, seed=seed, env_id=ENV_ID)
    warm = collect_tasks(env, warmup_tasks, seed=seed + 5_000_011,
                         exclude={t.id for t in train + held}, env_id=ENV_ID)
    rows = task_rows(env, warm, env_id=ENV_ID)
    pairs = [(r.messages, scorer.gold_completion(r.task)) for r in rows]
    corpus = [m["content"] for r in rows for m in r.messages] + [c for _, c in pairs]
    build_tiny_model(path, seed=seed, hidden_size=64, corpus=corpus, vocab_size=160)
    tiny, tokenizer = load_model_and_tokenizer(path, DeviceSettings("cpu"))
    tiny = run_sft(tiny, tokenizer, pairs, path.with_name(path.name + "-tmp"),
                   epochs=warmup_epochs, learning_rate=5e-3, batch_size=16, seed=seed)
    tiny.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def held_out_suite(out: Path, env_kwargs: dict, seed: int, train_tasks: int,
                   eval_tasks: int, max_completion_length: int) -> Path:
    """A suite file pinning the held-out tasks of the trainers' own split (never trained on):
    greedy, one sample each."""
    import rlvr_envs
    from rlvr_envs.agents.data import split_tasks

    env = rlvr_envs.make(ENV_ID, **env_kwargs)
    train, held = split_tasks(env, train_tasks, eval_tasks, seed=seed, env_id=ENV_ID)
    assert not {t.id for t in train} & {t.id for t in held}
    suite = {"name": f"arithmetic-held-out-s{seed}", "n": 1, "k": [1], "batch_size": 16,
             "description": "held-out rlvr/Arithmetic-v0 tasks of the experiments' split",
             "sampling": {"temperature": 0.0, "max_completion_length": max_completion_length},
             "entries": [{"env": ENV_ID, "name": "arithmetic", "kwargs": env_kwargs,
                          "tasks": [t.source_id or t.id for t in held]}]}
    path = out / f"held-out-s{seed}.json"
    path.write_text(json.dumps(suite, indent=2))
    return path


def rlvr_eval(policy: str, suite: Path, runs_dir: Path, run_id: str) -> dict[str, Any]:
    """Run `rlvr eval` on the suite and return its stored summary (accuracy, mean reward...)."""
    from rlvr_envs.eval.store import ResultStore

    rlvr = Path(sys.executable).with_name("rlvr")
    cmd = [str(rlvr), "eval", "-p", policy, "--suite", str(suite), "--runs-dir", str(runs_dir),
           "--run", run_id, "--overwrite", "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"rlvr eval failed ({done.returncode}): {' '.join(cmd)}\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    summary = ResultStore(runs_dir).get_summary(run_id)
    if summary is None:
        raise RuntimeError(f"rlvr eval stored no summary for run {run_id} in {runs_dir}")
    tokens = summary.get("completion_tokens") or {}
    return {"accuracy": summary["accuracy"], "mean_reward": summary["mean_reward"],
            "tasks": summary["tasks"], "mean_tokens": tokens.get("mean")}


def stats(values: Sequence[float]) -> dict[str, Any]:
    """Mean and spread over seeds (sample standard deviation; 0 for one seed)."""
    values = [float(v) for v in values]
    return {"mean": statistics.fmean(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "values": values}


def mean_curve(curves: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """Per-step mean and standard deviation over seeds (up to the shortest curve)."""
    length = min(len(c) for c in curves)
    means = [statistics.fmean(c[i] for c in curves) for i in range(length)]
    spread = [statistics.stdev([c[i] for c in curves]) if len(curves) > 1 else 0.0
              for i in range(length)]
    return means, spread


def write_results(out: Path, name: str, claim: str, config: dict, per_seed: dict,
                  summary: dict, started: float) -> Path:
    payload = {"experiment": name, "claim": claim, "command": command_line(), "config": config,
               "summary": summary, "per_seed": per_seed,
               "wall_seconds": round(time.time() - started, 1),
               "date": time.strftime("%Y-%m-%d", time.gmtime())}
    path = out / "results.json"
    path.write_text(json.dumps(payload, indent=2, default=str))
    return path


def plot_curves(ax: Any, step_curves: dict[str, list[list[float]]], ylabel: str) -> None:
    """One line per arm (mean over seeds) with a band of one standard deviation."""
    for label, curves in step_curves.items():
        means, spread = mean_curve(curves)
        steps = list(range(1, len(means) + 1))
        ax.plot(steps, means, label=label)
        ax.fill_between(steps, [m - s for m, s in zip(means, spread)],
                        [m + s for m, s in zip(means, spread)], alpha=0.2)
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(ylabel)
    ax.legend()


def figure(columns: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, columns, figsize=(5 * columns, 3.6))
    return fig, (axes if columns > 1 else [axes])


def save_figure(fig: Any, out: Path, title: str) -> Path:
    fig.suptitle(title)
    fig.tight_layout()
    path = out / "plot.png"
    fig.savefig(path, dpi=110)
    return path


def grpo_arm(model: str, run_dir: Path, env_kwargs: dict, seed: int, args: Any,
             **overrides: Any) -> dict[str, Any]:
    """One GRPO run of an arm; returns its per-step series and the held-out scores."""
    from rlvr_envs.agents.grpo import GRPOSettings, log_series, train_grpo

    settings = dict(env_id=ENV_ID, env_kwargs=env_kwargs, model=model, output_dir=str(run_dir),
                    train_tasks=args.train_tasks, eval_tasks=args.eval_tasks,
                    max_steps=args.steps, prompts_per_step=args.prompts_per_step,
                    num_generations=args.num_generations,
                    max_completion_length=args.max_completion_length, learning_rate=args.lr,
                    save_steps=max(args.steps, 1), seed=seed, device=args.device)
    settings.update(overrides)
    result = train_grpo(GRPOSettings(**settings))
    return {"length": log_series(run_dir, "completions/mean_length"),
            "accuracy": log_series(run_dir, "rewards/correctness/mean"),
            "zero_variance_frac": log_series(run_dir, "zero_variance_frac"),
            "held_out": result["eval"]}


def grpo_parser(description: str, name: str, steps: int = 30) -> argparse.ArgumentParser:
    p = parser(description, name)
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--train-tasks", type=int, default=64)
    p.add_argument("--eval-tasks", type=int, default=32)
    p.add_argument("--prompts-per-step", type=int, default=4)
    p.add_argument("--num-generations", type=int, default=8)
    p.add_argument("--max-completion-length", "--max-new-tokens", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-5)
    return p


def tail_mean(values: Sequence[float], n: int = 3) -> float:
    tail = list(values)[-n:]
    return statistics.fmean(tail) if tail else float("nan")


def arm_summary(per_seed: dict, arms: Sequence[str], *, growth: bool = False) -> dict:
    """Per arm, mean and spread over seeds: final length (and its growth), final train
    accuracy and the held-out reward after training."""
    def over_seeds(value: Any) -> dict[str, Any]:
        return stats([value(per_seed[s][arm]) for s in per_seed])

    summary = {}
    for arm in arms:
        row = {"final_length": over_seeds(lambda r: tail_mean(r["length"]))}
        if growth:
            row["length_growth"] = over_seeds(lambda r: tail_mean(r["length"]) - r["length"][0])
        row["final_accuracy"] = over_seeds(lambda r: tail_mean(r["accuracy"]))
        row["held_out_after"] = over_seeds(lambda r: r["held_out"]["after"]["reward"])
        summary[arm] = row
    return summary


def plot_length_and_accuracy(out: Path, per_seed: dict, arms: Sequence[str], title: str,
                             accuracy_label: str = "train accuracy") -> Path:
    """The two-panel plot of the length experiments: completion length and train accuracy
    per step, one curve (mean ± spread over seeds) per arm."""
    fig, (lengths, accuracy) = figure(2)
    plot_curves(lengths, {arm: [per_seed[s][arm]["length"] for s in per_seed] for arm in arms},
                "mean completion length (tokens)")
    plot_curves(accuracy, {arm: [per_seed[s][arm]["accuracy"] for s in per_seed]
                           for arm in arms}, accuracy_label)
    return save_figure(fig, out, title)
