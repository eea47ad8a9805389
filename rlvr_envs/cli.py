"""The `rlvr` command line: list, show and check envs; other commands join as sub-apps.

Every sub-command's errors leave through `main`, the one error path: a user's mistake (a bad
option, an unknown id, a missing or damaged file: the ValueError/TypeError/OSError... the
code raises) exits non-zero with one line on stderr, `rlvr <command>: error: <what was
expected, what came>`; `--debug` (anywhere on the line, or RLVR_DEBUG=1) shows the traceback.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import gymnasium as gym
import typer
from rich.console import Console
from rich.table import Table

from rlvr_envs.registry import env_entry, list_envs

try:  # typer vendors click from 0.2x on; its commands raise the vendored exceptions
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
except ImportError:  # pragma: no cover - older typer on the real click
    from click.exceptions import ClickException, NoArgsIsHelpError

#: exceptions whose message alone says what was expected (no type name, no --debug hint)
USER_ERRORS = (ValueError, TypeError, LookupError, OSError, gym.error.Error, ClickException)

app = typer.Typer(help="rlvr-envs: verifiable-reward environments for language-model RL.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
console = Console()

#: (module, attribute, command name) of sub-apps that other parts of the package provide
SUBCOMMANDS: list[tuple[str, str, str]] = [
    ("rlvr_envs.curriculum.cli", "app", "difficulty"),
    ("rlvr_envs.sandbox.cli", "app", "sandbox"),
    ("rlvr_envs.integrations.cli", "serve_app", "serve"),
    ("rlvr_envs.integrations.cli", "export_app", "export"),
    ("rlvr_envs.tasks.repo.cli", "app", "tasks"),
    ("rlvr_envs.agents.cli", "app", "train"),
    ("rlvr_envs.eval.cli", "eval_app", "eval"),
    ("rlvr_envs.eval.cli", "leaderboard_app", "leaderboard"),
]


@app.callback()
def root(debug: bool = typer.Option(False, "--debug",
                                    help="show the full traceback of an error")) -> None:
    """rlvr-envs: verifiable-reward environments for language-model RL."""


def json_object_option(text: str, option: str = "--env-kwargs") -> dict:
    """A JSON-object option's value, or ValueError naming the option and what came."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{option} must be a JSON object, got {text!r}: {err}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{option} must be a JSON object, got {type(value).__name__} {text!r}")
    return value


def deprecated_spelling(value, old_value, *, new: str, old: str):
    """An option's value, or the one given under its deprecated spelling `old` (which then
    takes the place of `new`'s, with a warning on stderr)."""
    if old_value is None:
        return value
    sys.stderr.write(f"rlvr: warning: {old} is deprecated; use {new}\n")
    return old_value


@app.command("list")
def list_command(family: str | None = typer.Option(None, help="only this family")) -> None:
    """List registered env ids with a one-line description."""
    envs = list_envs(family)
    table = Table("id", "description")
    for env_id, description in envs.items():
        table.add_row(env_id, description)
    console.print(table)


@app.command("show")
def show_command(env_id: str, seed: int = typer.Option(0, min=0, help="reset seed"),
                 kwargs: str = typer.Option("{}", "--env-kwargs", "--kwargs",
                                            help="gym.make kwargs as JSON")) -> None:
    """Print one task (the prompt as the policy sees it) and its gold answer."""
    import rlvr_envs

    env = rlvr_envs.make(env_id, **json_object_option(kwargs))
    prompt, info = env.reset(seed=seed)
    console.rule(f"{env_id}  seed={seed}  task={info['task']['id']}")
    console.print(prompt, markup=False)
    console.rule("gold")
    base = env.unwrapped
    gold = base.gold(info["task"]) if hasattr(base, "gold") else info["task"]["answer"]
    console.print(gold, markup=False)
    console.print(f"difficulty: {info['task']['difficulty']}", markup=False)
    env.close()


@app.command("check")
def check_command(env_ids: list[str] = typer.Argument(None, help="ids to check (default: all)"),
                  samples: int = typer.Option(5, min=1, help="tasks audited per id")) -> None:
    """For each id: check_env, seed determinism, and gold-scores-1 / empty-scores-0 audits."""
    from rlvr_envs.checks import check_env_id

    ids = env_ids or list(list_envs())
    for env_id in ids:  # an unknown id is the user's mistake, not a failed check
        env_entry(env_id)
    table = Table("id", "check", "result")
    failed = 0
    for env_id in ids:
        for name, ok, detail in check_env_id(env_id, samples=samples):
            failed += not ok
            table.add_row(env_id, name, ("[green]ok[/]" if ok else "[red]FAIL[/] ") + detail)
    console.print(table)
    if failed:
        console.print(f"[red]{failed} check(s) failed[/]")
        raise typer.Exit(1)
    console.print(f"[green]all checks passed for {len(ids)} env id(s)[/]")


def _attach_subcommands() -> None:
    """Add the sub-command groups to `app`, once (`main` may run many times in a process)."""
    attached = {group.name for group in app.registered_groups}
    for module, attribute, name in SUBCOMMANDS:
        if name not in attached:
            app.add_typer(getattr(importlib.import_module(module), attribute), name=name)


def command_path(args: list[str]) -> str:
    """The (sub-)command names at the head of `args`, e.g. "train grpo" ("" for none)."""
    node, names = typer.main.get_command(app), []
    for arg in args:
        commands = getattr(node, "commands", None)
        if arg.startswith("-") or not commands or arg not in commands:
            break
        node = commands[arg]
        names.append(arg)
    return " ".join(names)


def one_line(err: BaseException) -> str:
    """An exception as one line: its message (a KeyError's without quotes), whitespace
    collapsed; the type name only where the message alone would not say what went wrong."""
    if isinstance(err, ClickException):
        message = err.format_message()
    else:
        message = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
    message = " ".join(str(message).split())
    if not message or not isinstance(err, USER_ERRORS):
        return f"{type(err).__name__}: {message}" if message else type(err).__name__
    return message


def main(argv: list[str] | None = None) -> None:
    """The `rlvr` entry point and its one error path (see the module docstring)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("RLVR_DEBUG", "") not in ("", "0")
    args = [arg for arg in args if arg != "--debug"]
    _attach_subcommands()
    command = command_path(args)
    prefix = f"rlvr {command}" if command else "rlvr"
    try:
        code = app(args=args, prog_name="rlvr", standalone_mode=False)
    except NoArgsIsHelpError as err:  # a bare group: its help, as click does
        err.show()
        sys.exit(err.exit_code)
    except ClickException as err:
        if debug:
            raise
        sys.stderr.write(f"{prefix}: error: {one_line(err)} (see 'rlvr "
                         f"{command + ' ' if command else ''}--help')\n")
        sys.exit(err.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write(f"{prefix}: interrupted\n")
        sys.exit(130)
    except Exception as err:
        if debug:
            raise
        hint = "" if isinstance(err, USER_ERRORS) else " (rlvr --debug ... shows the traceback)"
        sys.stderr.write(f"{prefix}: error: {one_line(err)}{hint}\n")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
