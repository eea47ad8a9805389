"""Settings every single-env trainer shares (GRPO, PPO, expert iteration), and the run set-up
they share: validate, open the run folder, make the env, split its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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

    env_id: str
    model: str
    output_dir: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    train_tasks: int = 64
    eval_tasks: int = 16
    temperature: float = 1.0
    learning_rate: float = 1e-5
    seed: int = 0
    device: str = "auto"
    dtype: str = "auto"
    gradient_checkpointing: bool = False
    pass_rates: str | None = field(default=None, metadata={"help": (
        "a pass-rate file from `rlvr difficulty estimate`: train only on the training tasks "
        "whose measured pass rate lies strictly inside (solvable_lo, solvable_hi); unmeasured "
        "tasks are left out")})
    solvable_lo: float = field(default=0.0, metadata={"help": "lower end of the pass-rate range"})
    solvable_hi: float = field(default=1.0, metadata={"help": "upper end of the pass-rate range"})

    def validate(self) -> None:  # subclasses add their own checks
        pass


def split_training_tasks(settings: EnvTrainingSettings, env: Any) -> tuple[list, list]:
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
