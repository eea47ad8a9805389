"""Settings every single-env trainer shares (GRPO, PPO, expert iteration), and the run set-up
they share: validate, open the run folder, make the env, split its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gymnasium as gym

ZERO_VARIANCE_MODES = ("skip", "keep")


def zero_variance_field(default: str = "skip") -> Any:
    """The setting of GRPO and PPO for groups whose completions all scored the same."""
    return field(default=default, metadata={"help": (
        "groups whose completions all got the same reward carry no signal: 'skip' leaves them "
        "out of the loss and its normalisation (DAPO dynamic sampling; a batch of only such "
        "groups makes no update), 'keep' trains on them as TRL does; the fraction is logged "
        "as zero_variance_frac / skipped_frac")})


def check_zero_variance_mode(mode: str) -> None:
    if mode not in ZERO_VARIANCE_MODES:
        raise ValueError(f"zero_variance_groups must be one of {list(ZERO_VARIANCE_MODES)}, "
                         f"got {mode!r}")


@dataclass
class EnvTrainingSettings:
    """Which env and model, where the run lives, the train / held-out task split, sampling
    temperature, step size, seed and device. Trainers subclass it with their own knobs."""

    env_id: str = field(metadata={"help": "env id, e.g. rlvr/Arithmetic-v0"})
    model: str = field(metadata={"help": "smollm2-135m or a local checkpoint folder"})
    output_dir: str = field(metadata={"help": "run folder (resumes from its last checkpoint)"})
    env_kwargs: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "gym.make kwargs as JSON"})
    train_tasks: int = field(default=64, metadata={"help": "tasks to train on"})
    eval_tasks: int = field(default=16, metadata={
        "help": "held-out tasks scored before and after training"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature"})
    learning_rate: float = field(default=1e-5, metadata={"help": "optimizer step size"})
    seed: int = field(default=0, metadata={
        "help": "seed of the task split, sampling and initialisation"})
    device: str = field(default="auto", metadata={
        "help": "auto (cuda when present) | cpu | cuda[:N]"})
    dtype: str = field(default="auto", metadata={
        "help": "auto (bf16 on cuda, fp32 on cpu) | float32 | bfloat16 | float16"})
    gradient_checkpointing: bool = field(default=False, metadata={
        "help": "trade compute for memory in the backward pass"})
    pass_rates: str | None = field(default=None, metadata={"help": (
        "a pass-rate file from `rlvr difficulty estimate`: train only on the training tasks "
        "whose measured pass rate lies strictly inside (solvable_lo, solvable_hi); unmeasured "
        "tasks are left out")})
    solvable_lo: float = field(default=0.0, metadata={"help": "lower end of the pass-rate range"})
    solvable_hi: float = field(default=1.0, metadata={"help": "upper end of the pass-rate range"})

    def validate(self) -> None:  # subclasses add their own checks
        pass


LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")


@dataclass
class GRPOSettings(EnvTrainingSettings):
    max_steps: int = field(default=50, metadata={"help": "optimizer steps"})
    prompts_per_step: int = field(default=4, metadata={"help": "distinct prompts per step"})
    num_generations: int = field(default=8, metadata={"help": "completions per prompt (the group)"})
    max_completion_length: int = field(default=64, metadata={"help": "token cap of a completion"})
    loss_type: str = field(default="dapo", metadata={
        "help": "grpo|dr_grpo|dapo|bnpo|cispo|sapo|luspo|vespo"})
    beta: float = field(default=0.0, metadata={
        "help": "KL coefficient against the reference model"})
    scale_rewards: str = field(default="group", metadata={
        "help": "advantage scaling: group | batch | none"})
    save_steps: int = field(default=10, metadata={
        "help": "checkpoint every N steps (updates for PPO)"})
    multi_turn: bool = field(default=False, metadata={
        "help": "tool-calling env: play episodes (rollout_func)"})
    max_turns: int = field(default=8, metadata={"help": "turn cap of a multi-turn episode"})
    eval_before: bool = field(default=True, metadata={
        "help": "score the held-out tasks before training"})
    zero_variance_groups: str = zero_variance_field()
    group_rewards: list[str] = field(default_factory=list, metadata={"help": (
        "group-level rewards f(completions_of_one_prompt, tasks) -> list[float], as "
        "'module:function' or 'module:Class{json kwargs}' built with the env's scorer, e.g. "
        "'rlvr_envs.rewards.trl:KimiGroupPenalty{\"warmup_steps\": 10}'")})

    def validate(self) -> None:
        check_zero_variance_mode(self.zero_variance_groups)
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
    kl_coef: float = field(default=0.05, metadata={
        "help": "KL penalty against the reference model"})
    gamma: float = field(default=1.0, metadata={"help": "discount"})
    lam: float = field(default=0.95, metadata={"help": "GAE lambda"})
    whiten_advantages: bool = field(default=True, metadata={
        "help": "normalise advantages per batch"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping norm"})
    save_steps: int = field(default=5, metadata={
        "help": "checkpoint every N steps (updates for PPO)"})
    zero_variance_groups: str = zero_variance_field()

    def validate(self) -> None:
        for name in ("total_updates", "prompts_per_update", "samples_per_prompt",
                     "max_completion_length", "ppo_epochs", "minibatch_size", "save_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        check_zero_variance_mode(self.zero_variance_groups)
        if self.temperature <= 0:
            raise ValueError(f"PPO samples its rollouts: temperature must be > 0, got "
                             f"{self.temperature}")


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
    families: list[FamilySpec] = field(metadata={"help": "the families (--family NAME=ENV_ID)"})
    output_dir: str = field(metadata={"help": "run folder (resumes from its last checkpoint)"})
    train_tasks: int = field(default=32, metadata={"help": "tasks to train on"})
    eval_tasks: int = field(default=16, metadata={
        "help": "held-out tasks scored before and after training"})
    samples_per_task: int = field(default=4, metadata={"help": "completions sampled per task"})
    max_completion_length: int = field(default=64, metadata={"help": "token cap of a completion"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature"})
    expert_rounds: int = field(default=2, metadata={
        "help": "expert-iteration rounds of an expert trained here"})
    sft_epochs: float = field(default=1.0, metadata={"help": "fine-tuning epochs (per round)"})
    sft_learning_rate: float = field(default=1e-5, metadata={"help": "sequence-level step size"})
    logit_epochs: int = field(default=1, metadata={"help": "logit-level distillation epochs"})
    logit_learning_rate: float = field(default=1e-5, metadata={"help": "logit-level step size"})
    logit_temperature: float = field(default=1.0, metadata={
        "help": "softmax temperature of the logit loss"})
    batch_size: int = field(default=8, metadata={"help": "fine-tuning batch size"})
    seed: int = field(default=0, metadata={
        "help": "seed of the task split, sampling and initialisation"})
    device: str = field(default="auto", metadata={
        "help": "auto (cuda when present) | cpu | cuda[:N]"})
    dtype: str = field(default="auto", metadata={
        "help": "auto (bf16 on cuda, fp32 on cpu) | float32 | bfloat16 | float16"})

    def validate(self) -> None:
        if not self.families:
            raise ValueError("distillation needs at least one family (--family NAME=ENV_ID)")
        names = [f.name for f in self.families]
        if len(set(names)) != len(names):
            raise ValueError(f"family names must be distinct, got {names}")


def split_training_tasks(settings: EnvTrainingSettings, env: gym.Env) -> tuple[list, list]:
    """(train tasks, held-out tasks) for a run; with `pass_rates`, the train tasks are those
    inside the solvability range (the held-out ones stay as drawn)."""
    from rlvr_envs.agents.data import EnvDataError, split_tasks
    from rlvr_envs.curriculum import filter_by_pass_rate, in_solvability_range
    from rlvr_envs.curriculum import PassRates

    train, held_out = split_tasks(env, settings.train_tasks, settings.eval_tasks,
                                  seed=settings.seed, env_id=settings.env_id)
    if settings.pass_rates is None:
        return train, held_out
    in_solvability_range(None, settings.solvable_lo, settings.solvable_hi)  # validates the range
    rates = PassRates.load(settings.pass_rates).as_dict()
    kept = filter_by_pass_rate(train, rates, settings.solvable_lo, settings.solvable_hi)
    if not kept:
        measured = sum(t.id in rates for t in train)
        raise EnvDataError(f"none of the {len(train)} training tasks ({measured} measured in "
                           f"{settings.pass_rates}) has a pass rate in ({settings.solvable_lo}, "
                           f"{settings.solvable_hi})")
    return kept, held_out


def prepare_env_run(settings: EnvTrainingSettings) -> tuple[Any, Any, Any, list, list]:
    """(run folder, env, its scorer, train tasks, held-out tasks) after validating settings."""
    import rlvr_envs
    from rlvr_envs.agents.data import env_scorer
    from rlvr_envs.agents.run_dir import RunDir

    settings.validate()
    run = RunDir(settings.output_dir)
    run.write_settings(settings)
    env = rlvr_envs.make(settings.env_id, **settings.env_kwargs)
    scorer = env_scorer(env, settings.env_id)
    train, held_out = split_training_tasks(settings, env)
    return run, env, scorer, train, held_out
