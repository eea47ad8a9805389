"""Settings every single-env trainer shares (GRPO, PPO, expert iteration), and the run set-up
they share: validate, open the run folder, make the env, split its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class EnvTrainingSettings:
    """Which env and model, where the run lives, the train / held-out task split, sampling
    temperature, step size, seed and device. Trainers subclass it with their own knobs."""

    env_id: str = field(metadata={"help": "env id, e.g. rlvr/Arithmetic-v0"})
    model: str = field(metadata={"help": "smollm2-135m or a local checkpoint folder"})
    output_dir: str = field(metadata={"help": "run folder (resumes from its last checkpoint)"})
    env_kwargs: dict[str, Any] = field(default_factory=dict,
                                       metadata={"help": "gym.make kwargs as JSON"})
    train_tasks: int = field(default=64, metadata={"help": "tasks to train on"})
    eval_tasks: int = field(default=16, metadata={"help": "held-out tasks scored before and "
                                                          "after training"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature"})
    learning_rate: float = field(default=1e-5, metadata={"help": "optimizer step size"})
    seed: int = field(default=0, metadata={"help": "seed of the task split, sampling and "
                                                   "initialisation"})
    device: str = field(default="auto", metadata={"help": "auto (cuda when present) | cpu | "
                                                          "cuda[:N]"})
    dtype: str = field(default="auto", metadata={"help": "auto (bf16 on cuda, fp32 on cpu) | "
                                                         "float32 | bfloat16 | float16"})
    gradient_checkpointing: bool = field(default=False, metadata={
        "help": "trade compute for memory in the backward pass"})

    def validate(self) -> None:  # subclasses add their own checks
        pass


LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")


@dataclass
class GRPOSettings(EnvTrainingSettings):
    max_steps: int = field(default=50, metadata={"help": "optimizer steps"})
    prompts_per_step: int = field(default=4, metadata={"help": "distinct prompts per step"})
    num_generations: int = field(default=8, metadata={"help": "completions per prompt (the group)"})
    max_completion_length: int = field(default=64, metadata={"help": "token cap of a completion"})
    loss_type: str = field(default="dapo",
                           metadata={"help": "grpo|dr_grpo|dapo|bnpo|cispo|sapo|luspo|vespo"})
    beta: float = field(default=0.0,
                        metadata={"help": "KL coefficient against the reference model"})
    scale_rewards: str = field(default="group",
                               metadata={"help": "advantage scaling: group | batch | none"})
    save_steps: int = field(default=10, metadata={"help": "checkpoint every N steps"})
    multi_turn: bool = field(default=False,
                             metadata={"help": "tool-calling env: play episodes (rollout_func)"})
    max_turns: int = field(default=8, metadata={"help": "turn cap of a multi-turn episode"})
    eval_before: bool = field(default=True,
                              metadata={"help": "score the held-out tasks before training"})

    def validate(self) -> None:
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type must be one of {list(LOSS_TYPES)}, got {self.loss_type!r}")
        if self.num_generations < 2:
            raise ValueError(f"GRPO compares completions within a group: num_generations must be "
                             f">= 2, got {self.num_generations}")
        for name in ("max_steps", "prompts_per_step", "max_completion_length", "save_steps",
                     "train_tasks"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass
class PPOSettings(EnvTrainingSettings):
    total_updates: int = field(default=20, metadata={"help": "PPO updates"})
    prompts_per_update: int = field(default=8, metadata={"help": "distinct prompts per update"})
    samples_per_prompt: int = field(default=4, metadata={"help": "completions per prompt"})
    max_completion_length: int = field(default=32, metadata={"help": "token cap of a completion"})
    ppo_epochs: int = field(default=2, metadata={"help": "passes over each batch of rollouts"})
    minibatch_size: int = field(default=16, metadata={"help": "completions per optimizer step"})
    clip_range: float = field(default=0.2, metadata={"help": "policy ratio clip"})
    clip_range_value: float = field(default=0.2, metadata={"help": "value clip"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    kl_coef: float = field(default=0.05,
                           metadata={"help": "KL penalty against the reference model"})
    gamma: float = field(default=1.0, metadata={"help": "discount"})
    lam: float = field(default=0.95, metadata={"help": "GAE lambda"})
    whiten_advantages: bool = field(default=True,
                                    metadata={"help": "normalise advantages per batch"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping norm"})
    save_steps: int = field(default=5, metadata={"help": "checkpoint every N updates"})

    def validate(self) -> None:
        for name in ("total_updates", "prompts_per_update", "samples_per_prompt",
                     "max_completion_length", "ppo_epochs", "minibatch_size", "save_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass
class ExpertIterationSettings(EnvTrainingSettings):
    rounds: int = field(default=3, metadata={"help": "sample-filter-finetune rounds"})
    samples_per_task: int = field(default=8, metadata={"help": "completions sampled per task"})
    max_completion_length: int = field(default=64, metadata={"help": "token cap of a completion"})
    sft_epochs: float = field(default=1.0, metadata={"help": "fine-tuning epochs per round"})
    batch_size: int = field(default=8, metadata={"help": "fine-tuning batch size"})
    max_kept_per_task: int = field(default=4,
                                   metadata={"help": "verified completions kept per task"})

    def validate(self) -> None:
        for name in ("rounds", "samples_per_task", "max_completion_length", "batch_size",
                     "max_kept_per_task", "train_tasks"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass
class FamilySpec:
    name: str
    env_id: str
    expert: str | None = None  # checkpoint path; None = train one here
    env_kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class DistillSettings:
    student: str = field(metadata={"help": "starting model of the student"})
    families: list[FamilySpec] = field(
        metadata={"help": "the families (--family NAME=ENV_ID, --expert NAME=CHECKPOINT)"})
    output_dir: str = field(metadata={"help": "run folder"})
    train_tasks: int = field(default=32, metadata={"help": "tasks per family to train on"})
    eval_tasks: int = field(default=16, metadata={"help": "held-out tasks per family"})
    samples_per_task: int = field(default=4,
                                  metadata={"help": "expert completions sampled per task"})
    max_completion_length: int = field(default=64, metadata={"help": "token cap of a completion"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature"})
    expert_rounds: int = field(default=2, metadata={
        "help": "expert-iteration rounds of an expert trained here"})
    sft_epochs: float = field(default=1.0, metadata={"help": "sequence-level fine-tuning epochs"})
    sft_learning_rate: float = field(default=1e-5, metadata={"help": "sequence-level step size"})
    logit_epochs: int = field(default=1, metadata={"help": "logit-level distillation epochs"})
    logit_learning_rate: float = field(default=1e-5, metadata={"help": "logit-level step size"})
    logit_temperature: float = field(default=1.0,
                                     metadata={"help": "softmax temperature of the logit loss"})
    batch_size: int = field(default=8, metadata={"help": "fine-tuning batch size"})
    seed: int = field(default=0,
                      metadata={"help": "seed of the task split, sampling and initialisation"})
    device: str = field(default="auto",
                        metadata={"help": "auto (cuda when present) | cpu | cuda[:N]"})
    dtype: str = field(default="auto", metadata={
        "help": "auto (bf16 on cuda, fp32 on cpu) | float32 | bfloat16 | float16"})

    def validate(self) -> None:
        if not self.families:
            raise ValueError("distillation needs at least one family (--family NAME=ENV_ID)")
        names = [f.name for f in self.families]
        if len(set(names)) != len(names):
            raise ValueError(f"family names must be distinct, got {names}")


def prepare_env_run(settings: EnvTrainingSettings) -> tuple[Any, Any, Any, list, list]:
    """(run folder, env, its scorer, train tasks, held-out tasks) after validating settings."""
    import rlvr_envs
    from rlvr_envs.agents.data import env_scorer, split_tasks
    from rlvr_envs.agents.run_dir import RunDir

    settings.validate()
    run = RunDir(settings.output_dir)
    run.write_settings(settings)
    env = rlvr_envs.make(settings.env_id, **settings.env_kwargs)
    scorer = env_scorer(env, settings.env_id)
    train, held_out = split_tasks(env, settings.train_tasks, settings.eval_tasks,
                                  seed=settings.seed, env_id=settings.env_id)
    return run, env, scorer, train, held_out
