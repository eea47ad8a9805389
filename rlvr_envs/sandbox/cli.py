"""`rlvr sandbox ...`: build the Docker sandbox image, report which backends work here, and
remove the Docker pool containers that a finished process left behind."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="Sandbox backends: build the Docker image, check what runs here.",
                  no_args_is_help=True)
console = Console()


@app.command("build-image")
def build_image_command(tag: str = typer.Option(None, help="image tag (default: the project's)"),
                        force: bool = typer.Option(False, help="rebuild even if it exists"),
                        package: list[str] = typer.Option(
                            [], "--package", help="also build this repo-task package's image "
                                                  "(base image + its test environment)")
                        ) -> None:
    """Build the Docker sandbox image with debootstrap + `docker import` (no registry pull)."""
    from rlvr_envs.sandbox.image import IMAGE, ImageBuildError, build_image

    log = lambda m: console.print(m, markup=False)  # noqa: E731
    try:
        built = build_image(tag or IMAGE, force=force, log=log)
    except ImageBuildError as err:
        console.print(f"[red]{err}[/]")
        raise typer.Exit(1) from err
    console.print(f"[green]image ready: {built}[/]")
    if package:
        from rlvr_envs.tasks.repo.environments import PackageEnvironmentError, build_package_image
        for name in package:
            try:
                console.print(f"[green]image ready: {build_package_image(name, log=log)}[/]")
            except PackageEnvironmentError as err:
                console.print(f"[red]{name}: {err}[/]")
                raise typer.Exit(1) from err


@app.command("info")
def info_command() -> None:
    """Which backends work on this machine, and what `auto` picks (the first isolating one)."""
    from rlvr_envs.sandbox import BACKEND_CLASSES, backend_class
    from rlvr_envs.sandbox.cgroup import memory_cgroup_available

    table = Table("backend", "available", "note")
    auto = None
    for name in BACKEND_CLASSES:
        cls = backend_class(name)
        if not cls.isolating:
            table.add_row(name, "by name only", cls.describe())
            continue
        problem = cls.problem()
        picked = auto is None and problem is None
        auto = name if picked else auto
        table.add_row(name + (" (auto)" if picked else ""), "yes" if problem is None else "no",
                      problem or cls.describe())
    console.print(table)
    budget = ("one cgroup memory budget per run (anonymous memory, memfd, tmpfs)"
              if memory_cgroup_available() else
              "no writable memory cgroup: RLIMIT_AS and tmpfs sizes carved from the budget")
    console.print(f"memory: {budget}")


@app.command("cleanup")
def cleanup_command(all_pools: bool = typer.Option(
        False, "--all", help="also the pools of processes still running")) -> None:
    """Remove the Docker backend's pre-started containers left by processes that are gone."""
    from rlvr_envs.sandbox.docker import finish_removals, docker_problem, remove_orphans

    problem = docker_problem()
    if problem is not None:
        console.print(f"[red]Docker is unavailable: {problem}[/]")
        raise typer.Exit(1)
    removed = remove_orphans(everything=all_pools)
    finish_removals()
    console.print(f"removed {len(removed)} pooled container(s)")
