"""`rlvr serve` (HTTP reward / env server) and `rlvr export verl|openrlhf` (datasets)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from rlvr_envs.cli import json_object_option

console = Console()

serve_app = typer.Typer(help="Serve rewards and remote episodes over HTTP.",
                        pretty_exceptions_enable=False)
export_app = typer.Typer(help="Write an env's tasks as a trainer's dataset.", no_args_is_help=True,
                         pretty_exceptions_enable=False)


@serve_app.callback(invoke_without_command=True)
def serve_command(
    env: str = typer.Option("rlvr/Math-v0", help="default env id for /score and /reset"),
    kwargs: str = typer.Option("{}", "--env-kwargs", "--kwargs",
                               help="default env kwargs as JSON"),
    host: str = typer.Option("127.0.0.1", help="bind address; a non-loopback one needs --token "
                             "or --insecure"),
    port: int = typer.Option(8000, min=0, max=65535, help="port"),
    workers: int | None = typer.Option(None, min=1, help="scoring processes (default: CPU count)"),
    item_timeout: float = typer.Option(
        30.0, help="seconds before one completion scores 0 (more on a busy machine: the time "
                   "it waited for a CPU is not counted, up to 10x)"),
    max_body_mb: float = typer.Option(32.0, help="larger request bodies get 413"),
    token: str | None = typer.Option(None, envvar="RLVR_SERVER_TOKEN",
                                        help="require this bearer token (or ?token=)"),
    insecure: bool = typer.Option(False, "--insecure",
                                  help="allow a non-loopback --host without a token"),
    header_timeout: float = typer.Option(10.0, help="seconds a client has to send the request "
                                         "line and headers"),
    body_timeout: float = typer.Option(60.0, help="seconds a client has to send the body"),
    max_connections: int = typer.Option(1024, min=1, help="open connections at most; more get "
                                        "503"),
    session_ttl: float = typer.Option(600.0, help="idle seconds before a session is closed"),
    max_sessions: int = typer.Option(256, help="open sessions at most"),
    ray: str | None = typer.Option(None, "--ray", help="fan out over the Ray cluster at this "
                                      "address ('auto', 'ray://head:10001', 'local')"),
    log_level: str = typer.Option("info", help="uvicorn log level"),
) -> None:
    """Serve /score (OpenRLHF remote reward), /envs, /reset, /step, /session/{id}, /health."""
    from rlvr_envs.integrations.http_limits import ConnectionLimits
    from rlvr_envs.integrations.server import ServerConfig, serve

    limits = ConnectionLimits(header_timeout=header_timeout, body_timeout=body_timeout,
                              max_connections=max_connections)
    config = ServerConfig(env=env, env_kwargs=json_object_option(kwargs) or None, workers=workers,
                          item_timeout=item_timeout, max_body_bytes=int(max_body_mb * 2**20),
                          token=token, session_ttl=session_ttl, max_sessions=max_sessions,
                          ray_address=ray, limits=limits)
    serve(config, host=host, port=port, log_level=log_level, insecure=insecure)


@export_app.command("verl")
def export_verl_command(
    out: Path = typer.Argument(..., help="output folder for train.parquet and test.parquet"),
    env: str = typer.Option(..., help="env id, e.g. rlvr/Math-v0"),
    n: int = typer.Option(1000, min=1, help="train tasks"),
    test_n: int | None = typer.Option(None, min=0, help="test tasks (default n // 10)"),
    seed: int = typer.Option(0, min=0, help="sampling seed"),
    kwargs: str = typer.Option("{}", "--env-kwargs", "--kwargs",
                               help="env kwargs as JSON (kept in extra_info)"),
) -> None:
    """verl RL dataset Parquet (data_source, prompt, ability, reward_model, extra_info)."""
    from rlvr_envs.integrations.verl import export_verl

    paths = export_verl(env, n, out, test_n=test_n, seed=seed, env_kwargs=json_object_option(kwargs))
    for split, path in paths.items():
        console.print(f"{split}: {path}")
    console.print("verl: data.train_files=... custom_reward_function.path="
                  "pkg://rlvr_envs.integrations.verl custom_reward_function.name=compute_score",
                  markup=False)


@export_app.command("openrlhf")
def export_openrlhf_command(
    out: Path = typer.Argument(..., help="output JSONL file"),
    env: str = typer.Option(..., help="env id"),
    n: int = typer.Option(1000, min=1, help="tasks"),
    seed: int = typer.Option(0, min=0, help="sampling seed"),
    kwargs: str = typer.Option("{}", "--env-kwargs", "--kwargs",
                               help="env kwargs as JSON (carried in each label)"),
) -> None:
    """OpenRLHF prompt dataset: {"prompt": chat messages, "label": env + task JSON} per line
    (train with --data.input_key prompt --data.label_key label --data.apply_chat_template)."""
    from rlvr_envs.integrations.openrlhf import export_openrlhf

    count = export_openrlhf(env, n, out, seed=seed, env_kwargs=json_object_option(kwargs))
    console.print(f"{count} tasks: {out}")
