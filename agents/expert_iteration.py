"""Expert iteration (rejection-sampling fine-tuning): for N rounds, sample k completions per
task, keep the ones the env's verifier marks correct, and fine-tune on them (TRL SFTTrainer).

Each round ends with `checkpoint-<round>/` (model + tokenizer); re-running with the same
output folder resumes after the last finished round. The log has one line per round:
the sampled pass rate ("reward"), how many verified completions were kept, held-out score.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from rlvr_envs.agents.settings import ExpertIterationSettings, prepare_env_run

if TYPE_CHECKING:
    from rlvr_envs.agents.data import TaskRow

    from rlvr_envs.core.scoring import Scorer


def verified_samples(model: Any, tokenizer: Any, rows: list[TaskRow], scorer: Scorer, *, k: int,
                     max_completion_length: int, temperature: float, max_kept_per_task: int
                     ) -> tuple[list[tuple[TaskRow, str]], float]:
    """(row, text) pairs of distinct verified-correct samples, and the sampled pass rate."""
    from rlvr_envs.agents.generation import sample_chats

    groups = sample_chats(model, tokenizer, [r.messages for r in rows], n=k,
                          max_completion_length=max_completion_length, temperature=temperature)
    kept: list[tuple[TaskRow, str]] = []
    correct = total = 0
    for row, group in zip(rows, groups):
        texts = [s.text for s in group]
        scores = scorer.score_batch([row.task] * len(texts), texts)
        seen: set[str] = set()
        for text, score in zip(texts, scores):
            total += 1
            correct += bool(score.correct)
            if score.correct and text not in seen and len(seen) < max_kept_per_task:
                seen.add(text)
                kept.append((row, text))
    return kept, correct / max(total, 1)


def train_expert_iteration(settings: ExpertIterationSettings) -> dict[str, Any]:
    import torch
    from rlvr_envs.agents.data import require_answers, task_rows
    from rlvr_envs.agents.evaluate import score_model
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer
    from rlvr_envs.agents.sft import run_sft

    run, env, scorer, train, held_out = prepare_env_run(settings)
    require_answers(train, "expert iteration")
    train_rows = task_rows(env, train, env_id=settings.env_id)
    eval_rows = task_rows(env, held_out, env_id=settings.env_id)
    device = DeviceSettings(settings.device, settings.dtype, settings.gradient_checkpointing)

    last = run.last_checkpoint()
    start = last[0] if last else 0
    model, tokenizer = load_model_and_tokenizer(last[1] if last else settings.model, device)
    run.truncate_log(start)
    if eval_rows and "before" not in run.read_eval():
        run.write_eval({"before": score_model(
            model, tokenizer, eval_rows, scorer,
            max_completion_length=settings.max_completion_length)})
    for round_index in range(start + 1, settings.rounds + 1):
        torch.manual_seed(settings.seed * 1_000_003 + round_index)
        kept, pass_rate = verified_samples(
            model, tokenizer, train_rows, scorer, k=settings.samples_per_task,
            max_completion_length=settings.max_completion_length, temperature=settings.temperature,
            max_kept_per_task=settings.max_kept_per_task)
        random.Random(settings.seed + round_index).shuffle(kept)
        if kept:
            model = run_sft(model, tokenizer, [(r.messages, text) for r, text in kept],
                            run.path / "sft-tmp", epochs=settings.sft_epochs,
                            learning_rate=settings.learning_rate,
                            batch_size=settings.batch_size,
                            seed=settings.seed + round_index, bf16=device.use_bf16,
                            use_cpu=device.resolved_device() == "cpu",
                            gradient_checkpointing=settings.gradient_checkpointing)
        record = {"step": round_index, "reward": pass_rate, "kept": len(kept)}
        if eval_rows:
            record["held_out"] = score_model(
                model, tokenizer, eval_rows, scorer,
                max_completion_length=settings.max_completion_length)["reward"]
        run.log(record)
        checkpoint = run.path / f"checkpoint-{round_index}"
        model.save_pretrained(checkpoint)
        tokenizer.save_pretrained(checkpoint)

    model.save_pretrained(run.final_path)
    tokenizer.save_pretrained(run.final_path)
    if eval_rows:
        run.write_eval({"after": score_model(
            model, tokenizer, eval_rows, scorer,
            max_completion_length=settings.max_completion_length)})
    return {"run_dir": str(run.path), "steps": settings.rounds, "resumed": start > 0,
            "eval": run.read_eval()}
