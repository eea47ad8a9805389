"""Settings every single-env trainer shares (GRPO, PPO, expert iteration), and the run set-up
they share: validate, open the run folder, make the env, split its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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

    def validate(self) -> None:  # subclasses add their own checks
        pass


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
