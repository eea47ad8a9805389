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
import inspect
import warnings

from rlvr_envs.sandbox.base import (Limits, RunResult, Sandbox, SandboxedProcess,
                                    SandboxUnavailable)

#: backend name -> "module:class" of its Sandbox, imported on first use; `auto` takes the first
#: isolating one that can run here, in this order
BACKEND_CLASSES: dict[str, str] = {
    "bwrap": "rlvr_envs.sandbox.bwrap:BwrapSandbox",
    "local": "rlvr_envs.sandbox.local:NamespaceSandbox",
    "docker": "rlvr_envs.sandbox.docker:DockerSandbox",
    "local-unsafe": "rlvr_envs.sandbox.local:LocalSandbox",
}
BACKENDS = ("auto", *BACKEND_CLASSES)

__all__ = ["BACKENDS", "BACKEND_CLASSES", "Limits", "RunResult", "Sandbox", "SandboxedProcess",
           "SandboxUnavailable", "auto_backend", "backend_class", "get_sandbox"]


def backend_class(backend: str) -> type[Sandbox]:
    """The Sandbox class of a backend name (ValueError naming the known ones)."""
    if backend not in BACKEND_CLASSES:
        raise ValueError(f"unknown sandbox backend {backend!r}; choose one of {list(BACKENDS)}")
    module, _, name = BACKEND_CLASSES[backend].partition(":")
    return getattr(importlib.import_module(module), name)


def auto_backend() -> str:
    """The backend `auto` stands for here: the first isolating one of `BACKEND_CLASSES` that
    can run (SandboxUnavailable naming what each lacks when none can)."""
    problems = {}
    for name in BACKEND_CLASSES:
        cls = backend_class(name)
        if cls.isolating:
            problems[name] = cls.problem()
            if problems[name] is None:
                return name
    found = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
    raise SandboxUnavailable(f"sandbox 'auto': no isolating backend works here ({found}). "
                             f"Install bubblewrap, allow user namespaces or start Docker; "
                             f"sandbox='local-unsafe' runs code as plain processes that can "
                             f"read the host's files and reach the network")


def get_sandbox(backend: str = "auto", **options) -> Sandbox:
    """A sandbox backend by name: "auto" or one of `BACKEND_CLASSES`. With "auto", each
    option goes through only where the picked backend's constructor takes it."""
    if backend == "auto":
        accepted = {name: set(inspect.signature(backend_class(name).__init__).parameters)
                    for name in BACKEND_CLASSES}
        unknown = set(options) - set().union(*accepted.values())
        if unknown:
            raise TypeError(f"no sandbox backend takes the options {sorted(unknown)}")
        picked = auto_backend()
        return backend_class(picked)(**{k: v for k, v in options.items()
                                        if k in accepted[picked]})
    cls = backend_class(backend)
    if not cls.isolating:
        from rlvr_envs.sandbox.local import UnsafeSandboxWarning
        warnings.warn(f"sandbox {backend!r}: programs run as plain processes of this user "
                      "with rlimits only; they can read the host's files (data sets with the "
                      "tests' answers, caches, credentials), reach the network and write "
                      "wherever this user can. Use 'bwrap', 'local' or 'docker' for "
                      "untrusted code.", UnsafeSandboxWarning, stacklevel=2)
    return cls(**options)
