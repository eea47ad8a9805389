"""Where untrusted code runs: bubblewrap, namespaced local processes, Docker — or, asked
for by name only, plain local processes.

`get_sandbox("auto")` picks the first backend that isolates here: bubblewrap, then `local`
(its own namespaces, where user namespaces work), then Docker; where none works it raises
`SandboxUnavailable` naming the fixes, one of them `sandbox="local-unsafe"` (no isolation,
with a warning). A backend asked for by name that cannot run raises `SandboxUnavailable`
naming what is missing; it never falls back.
"""

from __future__ import annotations

import importlib
import warnings

from rlvr_envs.sandbox.base import (Limits, RunResult, Sandbox, SandboxedProcess,
                                    SandboxUnavailable)

#: backend name -> "module:class" of its Sandbox, imported on first use
BACKEND_CLASSES: dict[str, str] = {
    "local": "rlvr_envs.sandbox.local:NamespaceSandbox",
    "bwrap": "rlvr_envs.sandbox.bwrap:BwrapSandbox",
    "docker": "rlvr_envs.sandbox.docker:DockerSandbox",
    "local-unsafe": "rlvr_envs.sandbox.local:LocalSandbox",
}
BACKENDS = ("auto", *BACKEND_CLASSES)

__all__ = ["BACKENDS", "BACKEND_CLASSES", "Limits", "RunResult", "Sandbox", "SandboxedProcess",
           "SandboxUnavailable", "backend_class", "get_sandbox"]


def backend_class(backend: str) -> type[Sandbox]:
    """The Sandbox class of a backend name (ValueError naming the known ones)."""
    if backend not in BACKEND_CLASSES:
        raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {list(BACKENDS)}")
    module, _, name = BACKEND_CLASSES[backend].partition(":")
    return getattr(importlib.import_module(module), name)


def get_sandbox(backend: str = "auto", **options) -> Sandbox:
    """A sandbox backend by name: "auto" | "bwrap" | "local" | "docker" | "local-unsafe"."""
    if backend == "auto":
        return _first_isolating(options)
    cls = backend_class(backend)
    if backend == "local-unsafe":
        from rlvr_envs.sandbox.local import UnsafeSandboxWarning
        warnings.warn("sandbox 'local-unsafe': programs run as plain processes of this user "
                      "with rlimits only; they can read the host's files (data sets with the "
                      "tests' answers, caches, credentials), reach the network and write "
                      "wherever this user can. Use 'bwrap', 'local' or 'docker' for "
                      "untrusted code.", UnsafeSandboxWarning, stacklevel=2)
    return cls(**options)


def _first_isolating(options) -> Sandbox:
    from rlvr_envs.sandbox.bwrap import BwrapSandbox, bwrap_problem
    from rlvr_envs.sandbox.docker import DockerSandbox, docker_problem
    from rlvr_envs.sandbox.local import NamespaceSandbox, namespace_problem

    problems = {"bwrap": bwrap_problem()}
    if problems["bwrap"] is None:
        return BwrapSandbox(**options)
    local_options = {k: v for k, v in options.items() if k in ("python", "warm", "fork_servers")}
    problems["local"] = namespace_problem()
    if problems["local"] is None:
        return NamespaceSandbox(**local_options)
    problems["docker"] = docker_problem()
    if problems["docker"] is None:
        return DockerSandbox()
    found = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
    raise SandboxUnavailable(f"sandbox 'auto': no isolating backend works here ({found}). "
                             f"Install bubblewrap, allow user namespaces or start Docker; "
                             f"sandbox='local-unsafe' runs code as plain processes that can "
                             f"read the host's files and reach the network")
