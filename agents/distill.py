"""Multi-expert distillation (branch-train-merge): one expert per task family, one student.

1. experts: one per family (a checkpoint path, or trained here by expert iteration from the
   student's starting model when no path is given);
2. traces: each expert samples on its family's training tasks; only verified-correct
   completions are kept;
3. sequence level: the student is fine-tuned (TRL SFTTrainer) on the mixed, shuffled traces;
4. logit level: when the student's and an expert's tokenizers have the same vocabulary, the
   student is further trained to match that expert's next-token distribution on its family's
   traces (GKD-style: forward KL(expert || student) at temperature T on completion tokens);
5. report: held-out score of every expert and of the student (before and after) per family.

Stages write their outputs into the run folder (experts/, traces.jsonl, student-sft/,
student/) and a re-run skips the stages already done.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from rlvr_envs.agents.settings import DistillSettings


def same_vocabulary(a: Any, b: Any) -> bool:
    return a.get_vocab() == b.get_vocab()


def logit_distill(student: Any, tokenizer: Any, teacher: Any, pairs: list[tuple[list, str]], *,
                  epochs: int, learning_rate: float, temperature: float, batch_size: int,
                  seed: int) -> list[float]:
    """Train the student toward the teacher's token distributions on the completion tokens of
    `pairs`; returns the mean loss of each epoch."""
    import torch
    import torch.nn.functional as F

    from rlvr_envs.agents.generation import encode, render_prompt
    from rlvr_envs.agents.ppo import pack

    class _Seq:
        def __init__(self, prompt_ids: list[int], completion_ids: list[int]):
            self.prompt_ids, self.completion_ids = prompt_ids, completion_ids

    device = next(student.parameters()).device
    seqs = []
    for messages, text in pairs:
        prompt = render_prompt(tokenizer, messages)
        full = tokenizer.apply_chat_template(list(messages) + [{"role": "assistant",
                                                                "content": text}], tokenize=False)
        prompt_ids = encode(tokenizer, prompt)
        seqs.append(_Seq(prompt_ids, encode(tokenizer, full)[len(prompt_ids):]))
    teacher.eval().requires_grad_(False)
    student.train()
    optimizer = torch.optim.AdamW(student.parameters(), lr=learning_rate)
    rng = random.Random(seed)
    losses = []
    for _ in range(epochs):
        rng.shuffle(seqs)
        total = 0.0
        for begin in range(0, len(seqs), batch_size):
            ids, attention, mask = pack(seqs[begin:begin + batch_size], tokenizer.pad_token_id,
                                        str(device))
            with torch.no_grad():
                teacher_logits = teacher(input_ids=ids, attention_mask=attention).logits[:, :-1]
            student_logits = student(input_ids=ids, attention_mask=attention).logits[:, :-1]
            t = temperature
            teacher_logp = F.log_softmax(teacher_logits.float() / t, -1)
            student_logp = F.log_softmax(student_logits.float() / t, -1)
            kl = (teacher_logp.exp() * (teacher_logp - student_logp)).sum(-1)
            loss = (kl * mask).sum() / mask.sum().clamp(min=1) * t * t
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
        losses.append(total / max(1, -(-len(seqs) // batch_size)))
    return losses


def train_distill(settings: DistillSettings) -> dict[str, Any]:
    import torch

    import rlvr_envs
    from rlvr_envs.agents.data import env_scorer, require_answers, split_tasks, task_rows
    from rlvr_envs.agents.evaluate import score_model
    from rlvr_envs.agents.expert_iteration import (ExpertIterationSettings,
                                                   train_expert_iteration, verified_samples)
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer
    from rlvr_envs.agents.run_dir import RunDir
    from rlvr_envs.agents.sft import run_sft

    settings.validate()
    run = RunDir(settings.output_dir)
    run.write_settings(settings)
    device = DeviceSettings(settings.device, settings.dtype)
    families: dict[str, dict[str, Any]] = {}
    for spec in settings.families:
        env = rlvr_envs.make(spec.env_id, **spec.env_kwargs)
        train, held = split_tasks(env, settings.train_tasks, settings.eval_tasks,
                                  seed=settings.seed, env_id=spec.env_id)
        require_answers(train, "distillation")
        families[spec.name] = {"spec": spec, "scorer": env_scorer(env, spec.env_id),
                               "train": task_rows(env, train, env_id=spec.env_id),
                               "eval": task_rows(env, held, env_id=spec.env_id)}

    # 1. experts
    for name, fam in families.items():
        spec = fam["spec"]
        if spec.expert is None:
            result = train_expert_iteration(ExpertIterationSettings(
                env_id=spec.env_id, model=settings.student, env_kwargs=spec.env_kwargs,
                output_dir=str(run.path / "experts" / name), train_tasks=settings.train_tasks,
                eval_tasks=0, rounds=settings.expert_rounds,
                samples_per_task=settings.samples_per_task,
                max_new_tokens=settings.max_completion_length, temperature=settings.temperature,
                learning_rate=settings.sft_learning_rate, seed=settings.seed,
                device=settings.device, dtype=settings.dtype))
            fam["expert_path"] = str(Path(result["run_dir"]) / "final")
        else:
            fam["expert_path"] = spec.expert

    report: dict[str, dict[str, Any]] = {name: {} for name in families}
    student, tokenizer = load_model_and_tokenizer(settings.student, device)
    for name, fam in families.items():
        report[name]["student_before"] = score_model(
            student, tokenizer, fam["eval"], fam["scorer"],
            max_new_tokens=settings.max_completion_length)

    # 2. verified traces
    traces_path = run.path / "traces.jsonl"
    if not traces_path.exists():
        lines = []
        for name, fam in families.items():
            expert, expert_tok = load_model_and_tokenizer(fam["expert_path"], device)
            torch.manual_seed(settings.seed)
            kept, pass_rate = verified_samples(
                expert, expert_tok, fam["train"], fam["scorer"], k=settings.samples_per_task,
                max_new_tokens=settings.max_completion_length, temperature=settings.temperature,
                max_kept_per_task=settings.samples_per_task)
            lines += [json.dumps({"family": name, "messages": r.messages, "completion": text})
                      for r, text in kept]
        traces_path.write_text("".join(line + "\n" for line in lines))
    traces = [json.loads(line) for line in traces_path.read_text().splitlines() if line]
    for name in families:
        report[name]["traces"] = sum(t["family"] == name for t in traces)
    if not traces:
        raise ValueError("no expert produced a verified trace; the experts are too weak for "
                         "these tasks (train them longer or give stronger checkpoints)")

    # 3. sequence level
    sft_path = run.path / "student-sft"
    if (sft_path / "config.json").exists():
        student, tokenizer = load_model_and_tokenizer(sft_path, device)
    else:
        mixed = [(t["messages"], t["completion"]) for t in traces]
        random.Random(settings.seed).shuffle(mixed)
        student = run_sft(student, tokenizer, mixed, run.path / "sft-tmp",
                          epochs=settings.sft_epochs, learning_rate=settings.sft_learning_rate,
                          batch_size=settings.batch_size, seed=settings.seed,
                          bf16=device.use_bf16, use_cpu=device.resolved_device() == "cpu")
        student.save_pretrained(sft_path)
        tokenizer.save_pretrained(sft_path)

    # 4. logit level, per family whose expert shares the student's vocabulary
    final_path = run.path / "student"
    if (final_path / "config.json").exists():
        student, tokenizer = load_model_and_tokenizer(final_path, device)
    else:
        for name, fam in families.items():
            expert, expert_tok = load_model_and_tokenizer(fam["expert_path"], device)
            if not same_vocabulary(tokenizer, expert_tok):
                report[name]["logit_level"] = "skipped: tokenizers differ"
                continue
            pairs = [(t["messages"], t["completion"]) for t in traces if t["family"] == name]
            if pairs and settings.logit_epochs > 0:
                losses = logit_distill(student, tokenizer, expert, pairs,
                                       epochs=settings.logit_epochs,
                                       learning_rate=settings.logit_learning_rate,
                                       temperature=settings.logit_temperature,
                                       batch_size=settings.batch_size, seed=settings.seed)
                report[name]["logit_level"] = {"kl_per_epoch": losses}
        student.save_pretrained(final_path)
        tokenizer.save_pretrained(final_path)

    # 5. report
    for name, fam in families.items():
        expert, expert_tok = load_model_and_tokenizer(fam["expert_path"], device)
        report[name]["expert"] = score_model(expert, expert_tok, fam["eval"], fam["scorer"],
                                             max_new_tokens=settings.max_completion_length)
        report[name]["student_after"] = score_model(student, tokenizer, fam["eval"],
                                                    fam["scorer"],
                                                    max_new_tokens=settings.max_completion_length)
    (run.path / "report.json").write_text(json.dumps(report, indent=2))
    return {"run_dir": str(run.path), "student": str(final_path), "report": report}
