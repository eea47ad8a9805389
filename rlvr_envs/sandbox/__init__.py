"""Where untrusted code runs: local processes (rlimits), bubblewrap and Docker.

`get_sandbox("auto")` gives bubblewrap when it works here, else the plain local backend with
a warning (it cannot hide the host filesystem or the network). A backend asked for by name
that cannot run raises `SandboxUnavailable` naming what is missing; it never falls back.
"""

from __future__ import annotations

import warnings

from rlvr_envs.sandbox.base import (Limits, RunResult, Sandbox, SandboxedProcess,
                                    SandboxUnavailable)

BACKENDS = ("auto", "local", "bwrap", "docker")

__all__ = ["BACKENDS", "Limits", "RunResult", "Sandbox", "SandboxedProcess",
           "SandboxUnavailable", "get_sandbox"]


class WeakIsolationWarning(UserWarning):
    """`auto` fell back to the local backend: no filesystem or network isolation."""


def get_sandbox(backend: str = "auto", **options) -> Sandbox:
    """A sandbox backend by name: "auto" | "local" | "bwrap" | "docker"."""
    if backend == "local":
        from rlvr_envs.sandbox.local import LocalSandbox
        return LocalSandbox(**options)
    if backend == "bwrap":
        from rlvr_envs.sandbox.bwrap import BwrapSandbox
        return BwrapSandbox(**options)
    if backend == "docker":
        from rlvr_envs.sandbox.docker import DockerSandbox
        return DockerSandbox(**options)
    if backend == "auto":
        from rlvr_envs.sandbox.bwrap import BwrapSandbox, bwrap_problem
        problem = bwrap_problem()
        if problem is None:
            return BwrapSandbox(**options)
        from rlvr_envs.sandbox.local import LocalSandbox
        warnings.warn(f"sandbox 'auto': bubblewrap is unavailable ({problem}); running code as "
                      f"plain local processes with rlimits only — no filesystem or network "
                      f"isolation. Install bubblewrap or pass sandbox='docker'.",
                      WeakIsolationWarning, stacklevel=2)
        return LocalSandbox(**{k: v for k, v in options.items() if k == "python"})
    raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {list(BACKENDS)}")
