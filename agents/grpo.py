"""GRPO through TRL's GRPOTrainer, on any rlvr env.

- Data: the env's tasks (train / held-out split), each row the env's chat prompt plus the task
  record (`prompt`, `task`, `task_id` columns).
- Rewards: one TRL reward function per component of the env's scorer (each logged as
  `rewards/<component>/mean`), plus optional group-level functions
  `f(completions_of_one_prompt, tasks) -> list[float]` (see `reward_funcs`).
- Loss: TRL's `loss_type` passed through (grpo, dr_grpo, dapo, bnpo, cispo, sapo, luspo, vespo).
- Groups with no reward variance are left out of the update by default (`grpo_groups`).
- Multi-turn envs: TRL's `rollout_func`, playing each episode at the token level with the env's
  tool outputs masked out of the loss (see `multiturn`).
- Run folder: TRL checkpoints every `save_steps`, a JSONL log, the final model, held-out scores
  before and after. Re-running with the same output folder resumes from the last checkpoint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

from rlvr_envs.agents.settings import GRPOSettings, split_training_tasks



def _trainer_callbacks(run: Any) -> list[Any]:
    from transformers import TrainerCallback

    class JsonlLog(TrainerCallback):
        """Writes every log to run/log.jsonl; on resume first cuts it back to the checkpoint."""

        def on_train_begin(self, args, state, control, **kwargs):
            run.truncate_log(state.global_step)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and state.is_world_process_zero and "train_runtime" not in logs:
                run.log({"step": state.global_step, **logs})

    return [JsonlLog()]


def build_trainer(settings: GRPOSettings, *, group_rewards: Sequence[Callable[..., Any]] = (),
                  extra_callbacks: Sequence[Any] = ()) -> tuple[Any, dict[str, Any]]:
    """The configured GRPOTrainer and the pieces around it (rows, scorer, env)."""
    import rlvr_envs
    from trl import GRPOConfig

    from rlvr_envs.agents.grpo_groups import skipping_grpo_trainer

    from rlvr_envs.agents.data import EnvDataError, env_scorer, rows_dataset, task_rows
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer
    from rlvr_envs.agents.multiturn import multi_turn_rollout_func, prompt_key
    from rlvr_envs.agents.reward_funcs import (component_reward_funcs, episode_reward_funcs,
                                               group_reward_from_spec, group_reward_funcs,
                                               scorer_components)
    from rlvr_envs.agents.run_dir import RunDir

    settings.validate()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    run = RunDir(settings.output_dir)
    run.write_settings(settings)
    env = rlvr_envs.make(settings.env_id, **settings.env_kwargs)
    train, held_out = split_training_tasks(settings, env)
    train_rows = task_rows(env, train, env_id=settings.env_id)
    if len(train_rows) < settings.prompts_per_step:  # TRL would silently train zero steps
        raise EnvDataError(f"{len(train_rows)} training task(s) cannot fill a step of "
                           f"{settings.prompts_per_step} prompts; lower prompts_per_step or "
                           f"give more tasks")
    device = DeviceSettings(settings.device, settings.dtype, settings.gradient_checkpointing)
    model, tokenizer = load_model_and_tokenizer(settings.model, device)
    tokenizer.padding_side = "left"
    eval_rows = task_rows(env, held_out, env_id=settings.env_id)
    scorer = getattr(env.unwrapped, "scorer", None)
    rollout_func = None
    if settings.multi_turn:
        components = scorer_components(scorer) if scorer is not None else None
        rewards = episode_reward_funcs(components)
        rollout_func = multi_turn_rollout_func(
            lambda: rlvr_envs.make(settings.env_id, **settings.env_kwargs),
            {prompt_key(r.messages): r.task for r in train_rows}, max_turns=settings.max_turns,
            max_turn_tokens=settings.max_completion_length)
    else:
        if any(r.tools for r in train_rows):
            raise EnvDataError(f"{settings.env_id} is a tool-calling env (its reset info has "
                               f"'tools'); train it with multi_turn=True (--multi-turn)")
        rewards = component_reward_funcs(env_scorer(env, settings.env_id))
    group_rewards = [group_reward_from_spec(spec, scorer) for spec in settings.group_rewards
                     ] + list(group_rewards)
    rewards = list(rewards) + group_reward_funcs(group_rewards)

    config = GRPOConfig(
        output_dir=str(run.path), max_steps=settings.max_steps,
        per_device_train_batch_size=settings.prompts_per_step * settings.num_generations,
        gradient_accumulation_steps=1, num_generations=settings.num_generations,
        max_completion_length=settings.max_completion_length,
        learning_rate=settings.learning_rate, temperature=settings.temperature,
        loss_type=settings.loss_type, beta=settings.beta, scale_rewards=settings.scale_rewards,
        save_strategy="steps", save_steps=settings.save_steps, logging_steps=1,
        report_to="none", seed=settings.seed, data_seed=settings.seed,
        bf16=device.use_bf16, use_cpu=device.resolved_device() == "cpu",
        gradient_checkpointing=settings.gradient_checkpointing, top_k=0,
        save_only_model=False)
    trainer = skipping_grpo_trainer(settings.zero_variance_groups)(model=model, reward_funcs=rewards, args=config,
                          train_dataset=rows_dataset(train_rows), processing_class=tokenizer,
                          rollout_func=rollout_func,
                          callbacks=_trainer_callbacks(run) + list(extra_callbacks))
    return trainer, {"run": run, "env": env, "scorer": scorer, "train_rows": train_rows,
                     "eval_rows": eval_rows, "tokenizer": tokenizer}


def held_out_scores(settings: GRPOSettings, model: Any, parts: dict[str, Any]) -> dict[str, float]:
    from rlvr_envs.agents.evaluate import score_model, score_model_multi_turn

    if settings.multi_turn:
        return score_model_multi_turn(model, parts["tokenizer"], parts["eval_rows"], parts["env"],
                                      max_turns=settings.max_turns,
                                      max_turn_tokens=settings.max_completion_length)
    return score_model(model, parts["tokenizer"], parts["eval_rows"], parts["scorer"],
                       max_completion_length=settings.max_completion_length)


def train_grpo(settings: GRPOSettings, *, group_rewards: Sequence[Callable[..., Any]] = (),
               extra_callbacks: Sequence[Any] = ()) -> dict[str, Any]:
    """Train (or resume) and return {"run_dir", "steps", "eval"}."""
    trainer, parts = build_trainer(settings, group_rewards=group_rewards,
                                   extra_callbacks=extra_callbacks)
    run = parts["run"]
    resume = run.last_checkpoint() is not None
    model = trainer.accelerator.unwrap_model(trainer.model)
    if parts["eval_rows"] and settings.eval_before and "before" not in run.read_eval():
        run.write_eval({"before": held_out_scores(settings, model, parts)})
    trainer.train(resume_from_checkpoint=True if resume else None)
    trainer.save_model(str(run.final_path))
    parts["tokenizer"].save_pretrained(str(run.final_path))
    if parts["eval_rows"]:
        run.write_eval({"after": held_out_scores(settings, model, parts)})
    return {"run_dir": str(run.path), "steps": trainer.state.global_step, "eval": run.read_eval(),
            "resumed": resume}


def log_series(run_dir: str | Path, key: str) -> list[float]:
    """One logged metric over the steps of a run (e.g. "reward")."""
    from rlvr_envs.agents.run_dir import RunDir

    return [float(r[key]) for r in RunDir(run_dir).read_log() if key in r]
