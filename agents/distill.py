"""Multi-expert distillation (branch-train-merge): one expert per task family, one student.

1. experts: one per family (a checkpoint path, or trained here by expert iteration from the
   student's starting model when no path is given);
2. traces: each expert samples on its family's training tasks; only verified-correct
   completions are kept;
3. sequence level: the student is fine-tuned (TRL SFTTrainer) on the mixed, shuffled traces;
4. logit level: off-policy forward KL(expert || student) at temperature T on the completion
   tokens of the experts' own traces (not on-policy GKD: the student never samples here). The
   families are interleaved batch by batch in one optimiser, each batch matched to its own
   family's expert; families whose expert's vocabulary differs from the student's are skipped;
5. report: held-out score of every expert and of the student (before and after) per family.

Stages write their outputs into the run folder (experts/, traces.jsonl, student-sft/,
student/) and `stages.json` records the settings each was made with: a re-run reuses a stage
only when its settings (families, env kwargs, experts, sampling, ...) are unchanged and its
output is not empty, and redoing a stage redoes every later one.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rlvr_envs.agents.settings import DistillSettings


def same_vocabulary(a: Any, b: Any) -> bool:
    return a.get_vocab() == b.get_vocab()


def forward_kl_on_traces(student: Any, tokenizer: Any, teachers: dict[str, Any],
                         traces: list[tuple[str, list, str]], *, epochs: int,
                         learning_rate: float, temperature: float, batch_size: int,
                         seed: int) -> dict[str, list[float]]:
    """Off-policy forward KL(teacher || student) at `temperature` on the completion tokens of
    `traces` (family, messages, completion). Each batch holds one family's traces and is matched
    to that family's teacher; the batches of all families are shuffled together and trained in
    one optimiser, so no family overwrites another. Returns the mean loss per epoch, overall
    ("all") and per family."""
    import torch
    import torch.nn.functional as F

    from rlvr_envs.agents.generation import encode, render_prompt
    from rlvr_envs.agents.ppo import pack

    class _Seq:
        def __init__(self, prompt_ids: list[int], completion_ids: list[int]):
            self.prompt_ids, self.completion_ids = prompt_ids, completion_ids

    unknown = sorted({family for family, _, _ in traces} - set(teachers))
    if unknown:
        raise ValueError(f"traces of families {unknown} have no teacher")
    device = next(student.parameters()).device
    by_family: dict[str, list[_Seq]] = {}
    for family, messages, text in traces:
        prompt = render_prompt(tokenizer, messages)
        full = tokenizer.apply_chat_template(list(messages) + [{"role": "assistant",
                                                                "content": text}], tokenize=False)
        prompt_ids = encode(tokenizer, prompt)
        by_family.setdefault(family, []).append(_Seq(prompt_ids, encode(tokenizer, full)[len(prompt_ids):]))
    for teacher in teachers.values():
        teacher.eval().requires_grad_(False)
    student.train()
    optimizer = torch.optim.AdamW(student.parameters(), lr=learning_rate)
    rng = random.Random(seed)
    losses: dict[str, list[float]] = {"all": [], **{f: [] for f in by_family}}
    for _ in range(epochs):
        batches = []
        for family, seqs in by_family.items():
            rng.shuffle(seqs)
            batches += [(family, seqs[i:i + batch_size]) for i in range(0, len(seqs), batch_size)]
        rng.shuffle(batches)
        sums = {f: [0.0, 0] for f in losses}
        for family, batch in batches:
            ids, attention, mask = pack(batch, tokenizer.pad_token_id, str(device))
            with torch.no_grad():
                teacher_logits = teachers[family](input_ids=ids,
                                                  attention_mask=attention).logits[:, :-1]
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
            for key in ("all", family):
                sums[key][0] += loss.item()
                sums[key][1] += 1
        for key, (total, count) in sums.items():
            losses[key].append(total / max(count, 1))
    return losses


def checkpoint_stamp(path: str) -> list[list[Any]]:
    """(name, size, mtime) of a checkpoint's weight files: a checkpoint rewritten in place
    makes traces sampled from it stale."""
    folder = Path(path)
    if not folder.is_dir():
        return []
    return [[f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in sorted(folder.iterdir())
            if f.suffix in (".safetensors", ".bin")]


class Stages:
    """stages.json: the settings each stage's output was made with. A stage is current when its
    recorded key equals the key asked for; marking a stage done forgets every later stage."""

    ORDER = ("traces", "student-sft", "student")

    def __init__(self, path: Path):
        self.path = path
        self.keys = json.loads(path.read_text()) if path.exists() else {}

    def current(self, name: str, key: Any) -> bool:
        return self.keys.get(name) == key

    def done(self, name: str, key: Any) -> None:
        self.keys[name] = key
        for later in self.ORDER[self.ORDER.index(name) + 1:]:
            self.keys.pop(later, None)
        self.path.write_text(json.dumps(self.keys, indent=2, sort_keys=True))


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
                max_completion_length=settings.max_completion_length,
                temperature=settings.temperature, learning_rate=settings.sft_learning_rate,
                seed=settings.seed, device=settings.device, dtype=settings.dtype))
            fam["expert_path"] = str(Path(result["run_dir"]) / "final")
        else:
            fam["expert_path"] = spec.expert

    report: dict[str, dict[str, Any]] = {name: {} for name in families}
    student, tokenizer = load_model_and_tokenizer(settings.student, device)
    for name, fam in families.items():
        report[name]["student_before"] = score_model(
            student, tokenizer, fam["eval"], fam["scorer"],
            max_completion_length=settings.max_completion_length)

    # 2. verified traces (reused only when sampled with these experts and settings, and not empty)
    stages = Stages(run.path / "stages.json")
    traces_key = {"families": [{**asdict(fam["spec"]), "expert": fam["expert_path"]}
                               for fam in families.values()],
                  "expert_files": {name: checkpoint_stamp(fam["expert_path"])
                                   for name, fam in families.items()},
                  **{k: getattr(settings, k) for k in ("train_tasks", "samples_per_task",
                                                       "max_completion_length", "temperature",
                                                       "seed", "expert_rounds")}}
    traces_path = run.path / "traces.jsonl"
    traces = ([json.loads(line) for line in traces_path.read_text().splitlines() if line]
              if traces_path.exists() and stages.current("traces", traces_key) else [])
    if not traces:
        for name, fam in families.items():
            expert, expert_tok = load_model_and_tokenizer(fam["expert_path"], device)
            torch.manual_seed(settings.seed)
            kept, _ = verified_samples(
                expert, expert_tok, fam["train"], fam["scorer"], k=settings.samples_per_task,
                max_completion_length=settings.max_completion_length,
                temperature=settings.temperature, max_kept_per_task=settings.samples_per_task)
            traces += [{"family": name, "messages": r.messages, "completion": text}
                       for r, text in kept]
        if not traces:
            raise ValueError("no expert produced a verified trace; the experts are too weak for "
                             "these tasks (train them longer or give stronger checkpoints)")
        traces_path.write_text("".join(json.dumps(t) + "\n" for t in traces))
        stages.done("traces", traces_key)
    for name in families:
        report[name]["traces"] = sum(t["family"] == name for t in traces)

    # 3. sequence level
    sft_key = {"traces": traces_key, "student": settings.student,
               **{k: getattr(settings, k) for k in ("sft_epochs", "sft_learning_rate",
                                                    "batch_size")}}
    sft_path = run.path / "student-sft"
    if stages.current("student-sft", sft_key) and (sft_path / "config.json").exists():
        student, tokenizer = load_model_and_tokenizer(sft_path, device)
    else:
        mixed = [(t["messages"], t["completion"]) for t in traces]
        random.Random(settings.seed).shuffle(mixed)
        student = run_sft(student, tokenizer, mixed, run.path / "sft-tmp",
                          epochs=settings.sft_epochs, learning_rate=settings.sft_learning_rate,
                          batch_size=settings.batch_size, seed=settings.seed,
                          bf16=device.use_bf16, use_cpu=device.resolved_device() == "cpu")
        shutil.rmtree(sft_path, ignore_errors=True)
        student.save_pretrained(sft_path)
        tokenizer.save_pretrained(sft_path)
        stages.done("student-sft", sft_key)

    # 4. logit level: off-policy forward KL on the traces, families interleaved, one optimiser
    kl_key = {"sft": sft_key, **{k: getattr(settings, k) for k in (
        "logit_epochs", "logit_learning_rate", "logit_temperature")}}
    final_path = run.path / "student"
    if stages.current("student", kl_key) and (final_path / "config.json").exists():
        student, tokenizer = load_model_and_tokenizer(final_path, device)
        previous = json.loads((run.path / "report.json").read_text()) \
            if (run.path / "report.json").exists() else {}
        for name in families:
            if "kl_stage" in previous.get(name, {}):
                report[name]["kl_stage"] = previous[name]["kl_stage"]
    else:
        teachers = {}
        for name, fam in families.items():
            expert, expert_tok = load_model_and_tokenizer(fam["expert_path"], device)
            if same_vocabulary(tokenizer, expert_tok):
                teachers[name] = expert
            else:
                report[name]["kl_stage"] = "skipped: tokenizers differ"
        pairs = [(t["family"], t["messages"], t["completion"]) for t in traces
                 if t["family"] in teachers]
        if pairs and settings.logit_epochs > 0:
            losses = forward_kl_on_traces(student, tokenizer, teachers, pairs,
                                          epochs=settings.logit_epochs,
                                          learning_rate=settings.logit_learning_rate,
                                          temperature=settings.logit_temperature,
                                          batch_size=settings.batch_size, seed=settings.seed)
            for name in teachers:
                if name in losses:
                    report[name]["kl_stage"] = {
                        "method": "off-policy forward KL(expert || student) on expert traces",
                        "kl_per_epoch": losses[name], "all_families_kl_per_epoch": losses["all"]}
        shutil.rmtree(final_path, ignore_errors=True)
        student.save_pretrained(final_path)
        tokenizer.save_pretrained(final_path)
        stages.done("student", kl_key)

    # 5. report
    for name, fam in families.items():
        expert, expert_tok = load_model_and_tokenizer(fam["expert_path"], device)
        report[name]["expert"] = score_model(expert, expert_tok, fam["eval"], fam["scorer"],
                                             max_completion_length=settings.max_completion_length)
        report[name]["student_after"] = score_model(
            student, tokenizer, fam["eval"], fam["scorer"],
            max_completion_length=settings.max_completion_length)
    (run.path / "report.json").write_text(json.dumps(report, indent=2))
    return {"run_dir": str(run.path), "student": str(final_path), "report": report}
