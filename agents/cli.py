"""`rlvr train ...`: the trainers on the command line (grpo, ppo, expert-iteration, distill).

Each sub-command's options are generated from its settings dataclass (`GRPOSettings`,
`PPOSettings`, `ExpertIterationSettings`, `DistillSettings`): one option per field, named after
it (`--max-completion-length`, `--save-steps`; `env_id` is `--env`), with the field's default
and its `metadata["help"]` as help text. Every command writes a run folder (settings,
log.jsonl, checkpoints, final model, eval.json) and resumes from its last checkpoint when run
again with the same --output-dir.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from collections.abc import Callable
from typing import Any, List

import typer
from rich.console import Console

app = typer.Typer(help="Train a model on an rlvr env (GRPO, PPO, expert iteration, distillation).",
                  no_args_is_help=True, pretty_exceptions_enable=False)
console = Console()

#: settings field -> its option name when it is not the field's own
OPTION_NAMES = {"env_id": "--env", "group_rewards": "--group-reward"}


def _kwargs(text: str, option: str = "--env-kwargs") -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise typer.BadParameter(f"{option} must be a JSON object: {err}") from None
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{option} must be a JSON object, e.g. '{{\"difficulty\": 1}}'")
    return value


def _report(result: dict) -> None:
    console.print_json(json.dumps(result, default=str))


def _option_name(name: str) -> str:
    return OPTION_NAMES.get(name, "--" + name.replace("_", "-"))


def settings_parameters(settings_cls: type, skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """One typer option per field of `settings_cls` (its default, its help text); a dict field
    is a JSON option, a bool field a --flag/--no-flag pair."""
    hints = typing.get_type_hints(settings_cls)
    params = []
    for field in dataclasses.fields(settings_cls):
        if field.name in skip:
            continue
        hint, help_text = hints[field.name], field.metadata.get("help")
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = ...
        name = _option_name(field.name)
        if typing.get_origin(hint) is dict:
            hint, default = str, json.dumps(default) if default is not ... else ...
        if hint is bool:
            flag = name[2:]
            option = typer.Option(default, f"--{flag}/--no-{flag}", help=help_text)
        else:
            option = typer.Option(default, name, help=help_text)
        params.append(inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=option, annotation=hint))
    return params


def settings_from_options(settings_cls: type, options: dict[str, Any], **fixed: Any) -> Any:
    """The settings object from the generated options (JSON options parsed)."""
    hints = typing.get_type_hints(settings_cls)
    values = dict(fixed)
    for field in dataclasses.fields(settings_cls):
        if field.name in options:
            value = options[field.name]
            if typing.get_origin(hints[field.name]) is dict:
                value = _kwargs(value, _option_name(field.name))
            values[field.name] = value
    return settings_cls(**values)


def settings_command(name: str, settings_cls: type, run: Callable[..., None], *,
                     help_text: str, skip: tuple[str, ...] = (),
                     extra: tuple[inspect.Parameter, ...] = ()) -> None:
    """Register `rlvr train NAME`: the options of `settings_cls` (less `skip`) plus `extra`;
    `run(options)` gets every option's value by name."""

    def command(**options: Any) -> None:
        run(options)

    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        settings_parameters(settings_cls, skip) + list(extra))
    command.__doc__ = help_text
    app.command(name, help=help_text)(command)


def _train(trainer: Callable[[Any], dict], settings_cls: type,
           after: Callable[[dict], None] = _report, **fixed: Any) -> Callable[[dict], None]:
    def run(options: dict) -> None:
        settings = settings_from_options(settings_cls, options, **fixed)
        settings.validate()
        after(trainer(settings))

    return run


def _register() -> None:
    from rlvr_envs.agents.settings import (DistillSettings, ExpertIterationSettings,
                                           GRPOSettings, PPOSettings)

    def grpo(settings: Any) -> dict:
        from rlvr_envs.agents.grpo import train_grpo
        return train_grpo(settings)

    def ppo(settings: Any) -> dict:
        from rlvr_envs.agents.ppo import train_ppo
        return train_ppo(settings)

    def expert_iteration(settings: Any) -> dict:
        from rlvr_envs.agents.expert_iteration import train_expert_iteration
        return train_expert_iteration(settings)

    settings_command("grpo", GRPOSettings, _train(grpo, GRPOSettings),
                     help_text="GRPO through TRL on an env's tasks, rewards from the env's scorer.")
    settings_command("ppo", PPOSettings, _train(ppo, PPOSettings),
                     help_text="PPO with a value head and verifiable rewards (agents/ppo.py).")
    settings_command("expert-iteration", ExpertIterationSettings,
                     _train(expert_iteration, ExpertIterationSettings),
                     help_text="Sample k per task, keep the verified-correct ones, SFT on them; "
                               "N rounds.")
    family = inspect.Parameter(
        "family", inspect.Parameter.KEYWORD_ONLY, annotation=List[str],
        default=typer.Option(..., "--family", help="NAME=ENV_ID, once per family"))
    family_kwargs = inspect.Parameter(
        "family_kwargs", inspect.Parameter.KEYWORD_ONLY, annotation=List[str],
        default=typer.Option([], "--family-kwargs", help="NAME=JSON: gym.make kwargs of that "
                             "family's env, e.g. math='{\"difficulty\": 1}'"))
    expert = inspect.Parameter(
        "expert", inspect.Parameter.KEYWORD_ONLY, annotation=List[str],
        default=typer.Option([], "--expert", help="NAME=CHECKPOINT (else trained here by "
                                                  "expert iteration)"))
    settings_command("distill", DistillSettings, _distill, skip=("families",),
                     extra=(family, family_kwargs, expert),
                     help_text="Distill per-family experts into one student (sequence + logit "
                               "level); print a report.")


def _pairs(values: List[str], what: str) -> dict:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise typer.BadParameter(f"{what} must look like NAME=VALUE, got {value!r}")
        out[name] = rest
    return out


def _distill(options: dict) -> None:
    from rlvr_envs.agents.distill import train_distill
    from rlvr_envs.agents.settings import DistillSettings, FamilySpec

    envs, experts = _pairs(options.pop("family"), "--family"), _pairs(options.pop("expert"),
                                                                       "--expert")
    kwargs = {name: _kwargs(text, "--family-kwargs")
              for name, text in _pairs(options.pop("family_kwargs"), "--family-kwargs").items()}
    for option, names in (("--expert", experts), ("--family-kwargs", kwargs)):
        unknown = sorted(set(names) - set(envs))
        if unknown:
            raise typer.BadParameter(f"{option} names {unknown} have no --family")
    families = [FamilySpec(n, e, experts.get(n), kwargs.get(n, {})) for n, e in envs.items()]
    _train(train_distill, DistillSettings, _distill_report, families=families)(options)


def _distill_report(result: dict) -> None:
    from rich.table import Table

    table = Table("family", "expert", "student before", "student after", "traces")
    for name, row in result["report"].items():
        table.add_row(name, f"{row['expert']['reward']:.3f}",
                      f"{row['student_before']['reward']:.3f}",
                      f"{row['student_after']['reward']:.3f}", str(row["traces"]))
    console.print(table)
    console.print(f"student: {result['student']}")


_register()
