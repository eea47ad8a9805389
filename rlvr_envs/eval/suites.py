"""Evaluation suites as data: which envs, with which kwargs, on which pinned tasks, how many samples.

A suite is a JSON or YAML file, shipped in `tasks/suites/` (package data of `rlvr_envs.tasks`)
or given by path:

    {"name": "quick", "n": 4, "k": [1, 2, 4], "batch_size": 8,
     "sampling": {"temperature": 0.8, "top_p": 0.95, "max_completion_length": 256},
     "entries": [
       {"env": "rlvr/Math-v0", "name": "math", "kwargs": {"difficulty": 1},
        "seeds": {"start": 0, "count": 16}},
       {"env": "rlvr/HumanEval-v0", "tasks": ["HumanEval/0", "HumanEval/2"], "n": 2,
        "sampling": {"max_completion_length": 384}},
       {"env": "rlvr/RepoEdit-v0", "seeds": [0, 1], "n": 1, "max_turns": 8}]}

`load_suite` checks the structure; `resolve_suite` makes every env and resolves every pinned
task, so a suite that names a missing env, a bad kwarg or a missing task fails before any
sampling starts.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    import gymnasium as gym

SUITE_KEYS = {"name", "description", "n", "k", "sampling", "batch_size", "entries"}
ENTRY_KEYS = {"env", "name", "kwargs", "tasks", "seeds", "n", "sampling", "max_turns"}
SAMPLING_KEYS = {"temperature", "top_p", "max_completion_length", "stop"}
SUITE_SUFFIXES = (".json", ".yaml", ".yml")


class SuiteError(ValueError):
    """A suite file is malformed or names an env, kwarg or task that does not exist."""


@dataclass(frozen=True)
class SuiteEntry:
    """One env of a suite: `name` keys its episodes in the result store (default: the env id)."""

    env: str
    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    tasks: tuple[str, ...] | None = None
    seeds: tuple[int, ...] | None = None
    n: int = 1
    sampling: dict[str, Any] = field(default_factory=dict)
    max_turns: int | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    entries: tuple[SuiteEntry, ...]
    k: tuple[int, ...]
    batch_size: int
    definition: dict[str, Any]  # the file's content, as recorded with every run


@dataclass
class ResolvedEntry:
    """A suite entry with its env made and its tasks resolved (in suite order, no duplicates)."""

    entry: SuiteEntry
    env: gym.Env
    tasks: list[Task]
    messages: list[list[dict[str, Any]]]
    multi_turn: bool
    duplicates_dropped: int = 0

    @property
    def scorer(self) -> Any:
        return getattr(self.env.unwrapped, "scorer", None)


@dataclass
class ResolvedSuite:
    suite: Suite
    entries: list[ResolvedEntry]

    @property
    def num_episodes(self) -> int:
        return sum(len(e.tasks) * e.entry.n for e in self.entries)

    def task_ids(self) -> dict[str, list[str]]:
        """Entry name → resolved task ids: recorded with a run so a resume can check them."""
        return {e.entry.name: [t.id for t in e.tasks] for e in self.entries}

    def close(self) -> None:
        for e in self.entries:
            e.env.close()


# -- finding and parsing -----------------------------------------------------------------------

def _shipped_dir():
    return resources.files("rlvr_envs.tasks").joinpath("suites")


def list_suites() -> dict[str, str]:
    """Shipped suite names → description."""
    out = {}
    for item in sorted(_shipped_dir().iterdir(), key=lambda p: p.name):
        if item.name.endswith(SUITE_SUFFIXES):
            data = _parse_text(item.read_text(encoding="utf-8"), item.name)
            out[Path(item.name).stem] = str(data.get("description", ""))
    return out


def _parse_text(text: str, where: str) -> dict[str, Any]:
    try:
        if where.endswith(".json"):
            data = json.loads(text)
        else:
            import yaml  # pyyaml comes with `datasets`, a core dependency

            data = yaml.safe_load(text)
    except Exception as err:  # noqa: BLE001 - any parse error becomes one clear message
        raise SuiteError(f"suite {where}: cannot parse: {err}") from err
    if not isinstance(data, dict):
        raise SuiteError(f"suite {where}: expected a mapping at the top, got {type(data).__name__}")
    return data


def load_suite(name_or_path: str | Path) -> Suite:
    """A shipped suite by name (`quick`) or a suite file by path; structure checked here."""
    path = Path(name_or_path)
    if path.suffix in SUITE_SUFFIXES and path.is_file():
        return parse_suite(_parse_text(path.read_text(encoding="utf-8"), str(path)),
                           default_name=path.stem)
    for suffix in SUITE_SUFFIXES:
        item = _shipped_dir().joinpath(f"{name_or_path}{suffix}")
        if item.is_file():
            return parse_suite(_parse_text(item.read_text(encoding="utf-8"), item.name),
                               default_name=str(name_or_path))
    raise SuiteError(f"no suite {str(name_or_path)!r}: not a suite file (.json/.yaml) and not a "
                     f"shipped suite; shipped suites: {sorted(list_suites())}")


def _int(value: Any, what: str, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise SuiteError(f"{what} must be an int >= {minimum}, got {value!r}")
    return value


def _sampling(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SuiteError(f"{what} must be a mapping, got {type(value).__name__}")
    value = dict(value)
    if "max_new_tokens" in value:  # the cap's old name
        if "max_completion_length" in value:
            raise SuiteError(f"{what}: give max_completion_length only (max_new_tokens is its "
                             f"deprecated name)")
        warnings.warn(f"{what}: 'max_new_tokens' is now 'max_completion_length'",
                      DeprecationWarning, stacklevel=4)
        value["max_completion_length"] = value.pop("max_new_tokens")
    unknown = set(value) - SAMPLING_KEYS
    if unknown:
        raise SuiteError(f"{what}: unknown keys {sorted(unknown)}; valid: {sorted(SAMPLING_KEYS)}")
    return value


def _seeds(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, Mapping):
        unknown = set(value) - {"start", "count"}
        if unknown or "count" not in value:
            raise SuiteError(f"{what} as a mapping takes 'count' and optionally 'start', got "
                             f"{sorted(value)}")
        start = _int(value.get("start", 0), f"{what}.start", minimum=0)
        return tuple(range(start, start + _int(value["count"], f"{what}.count")))
    if isinstance(value, list) and value:
        return tuple(_int(s, f"{what}[{i}]", minimum=0) for i, s in enumerate(value))
    raise SuiteError(f"{what} must be a non-empty list of ints or {{start, count}}, got {value!r}")


def parse_suite(data: Mapping[str, Any], default_name: str = "suite") -> Suite:
    """Check a suite's structure (not yet its envs and tasks: see `resolve_suite`)."""
    name = str(data.get("name", default_name))
    where = f"suite {name!r}"
    unknown = set(data) - SUITE_KEYS
    if unknown:
        raise SuiteError(f"{where}: unknown keys {sorted(unknown)}; valid: {sorted(SUITE_KEYS)}")
    raw_entries = data.get("entries")
    if not isinstance(raw_entries, list) or not raw_entries:
        raise SuiteError(f"{where}: 'entries' must be a non-empty list of env entries")
    default_n = _int(data.get("n", 1), f"{where}: n")
    suite_sampling = _sampling(data.get("sampling"), f"{where}: sampling")
    entries: list[SuiteEntry] = []
    for i, raw in enumerate(raw_entries):
        if not isinstance(raw, Mapping):
            raise SuiteError(f"{where}: entry {i} must be a mapping, got {type(raw).__name__}")
        ewhere = f"{where}, entry {i}"
        unknown = set(raw) - ENTRY_KEYS
        if unknown:
            raise SuiteError(f"{ewhere}: unknown keys {sorted(unknown)}; valid: {sorted(ENTRY_KEYS)}")
        env_id = raw.get("env")
        if not isinstance(env_id, str) or not env_id:
            raise SuiteError(f"{ewhere}: 'env' must be an env id such as 'rlvr/Math-v0'")
        ewhere = f"{where}, entry {i} ({env_id})"
        if ("tasks" in raw) == ("seeds" in raw):
            raise SuiteError(f"{ewhere}: give exactly one of 'tasks' (pinned task ids) or 'seeds'")
        tasks = None
        if "tasks" in raw:
            tasks = raw["tasks"]
            if not isinstance(tasks, list) or not tasks or not all(isinstance(t, str) for t in tasks):
                raise SuiteError(f"{ewhere}: 'tasks' must be a non-empty list of task id strings")
            tasks = tuple(tasks)
        kwargs = raw.get("kwargs", {})
        if not isinstance(kwargs, Mapping):
            raise SuiteError(f"{ewhere}: 'kwargs' must be a mapping of gym.make keyword arguments")
        max_turns = raw.get("max_turns")
        entries.append(SuiteEntry(
            env=env_id, name=str(raw.get("name", env_id)), kwargs=dict(kwargs), tasks=tasks,
            seeds=_seeds(raw["seeds"], f"{ewhere}: seeds") if "seeds" in raw else None,
            n=_int(raw.get("n", default_n), f"{ewhere}: n"),
            sampling={**suite_sampling, **_sampling(raw.get("sampling"), f"{ewhere}: sampling")},
            max_turns=None if max_turns is None else _int(max_turns, f"{ewhere}: max_turns")))
    names = [e.name for e in entries]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SuiteError(f"{where}: entry names must be unique (they key the results); repeated: "
                         f"{repeated} — give each entry a 'name'")
    max_n = max(e.n for e in entries)
    ks = data.get("k", [1])
    if not isinstance(ks, list) or not ks:
        raise SuiteError(f"{where}: 'k' must be a non-empty list of ints")
    ks = tuple(sorted({_int(k, f"{where}: k") for k in ks}))
    if ks[-1] > max_n:
        raise SuiteError(f"{where}: k={ks[-1]} exceeds the number of samples per task (n={max_n})")
    return Suite(name=name, description=str(data.get("description", "")), entries=tuple(entries),
                 k=ks, batch_size=_int(data.get("batch_size", 8), f"{where}: batch_size"),
                 definition=json.loads(json.dumps(dict(data))))


# -- resolving envs and tasks ------------------------------------------------------------------

def _is_multi_turn(env: gym.Env, info: Mapping[str, Any]) -> bool:
    flag = getattr(env.unwrapped, "multi_turn", None)
    return bool(flag) if flag is not None else "tools" in info


def _full_task(env: gym.Env, record: dict[str, Any]) -> Task:
    """The whole task behind a reset's `info["task"]` (multi-turn envs hide the gold there)."""
    base = env.unwrapped
    return base.resolve_task(record) if hasattr(base, "resolve_task") else Task.from_dict(record)


def resolve_entry(suite: Suite, entry: SuiteEntry) -> ResolvedEntry:
    import rlvr_envs

    where = f"suite {suite.name!r}, entry {entry.name!r} ({entry.env})"
    try:
        env = rlvr_envs.make(entry.env, **entry.kwargs)
    except Exception as err:  # noqa: BLE001 - unknown id, bad kwarg, missing data: all one error
        raise SuiteError(f"{where}: cannot make the env: {err}") from err
    tasks: list[Task] = []
    messages: list[list[dict[str, Any]]] = []
    seen: set[str] = set()
    multi_turn = False
    pins: list[tuple[str, dict[str, Any]]] = (
        [(f"task {t!r}", {"options": {"task": t}}) for t in entry.tasks] if entry.tasks is not None
        else [(f"seed {s}", {"seed": s}) for s in entry.seeds or ()])
    try:
        for label, reset_kwargs in pins:
            try:
                _, info = env.reset(**reset_kwargs)
            except Exception as err:  # noqa: BLE001
                raise SuiteError(f"{where}: {label} cannot be resolved: {err}") from err
            if "task" not in info:
                raise SuiteError(f"{where}: the env's reset info has no 'task' record, so its "
                                 f"episodes cannot be keyed by task id")
            task = _full_task(env, info["task"])
            multi_turn = multi_turn or _is_multi_turn(env, info)
            if task.id in seen:
                continue
            seen.add(task.id)
            tasks.append(task)
            messages.append(list(info.get("messages") or []))
    except BaseException:
        env.close()
        raise
    return ResolvedEntry(entry, env, tasks, messages, multi_turn,
                         duplicates_dropped=len(pins) - len(tasks))


def resolve_suite(suite: Suite) -> ResolvedSuite:
    """Make every env and resolve every task; any problem raises SuiteError before sampling."""
    resolved: list[ResolvedEntry] = []
    problems: list[str] = []
    try:
        for entry in suite.entries:
            try:
                resolved.append(resolve_entry(suite, entry))
            except SuiteError as err:
                problems.append(str(err))
    except BaseException:
        for r in resolved:
            r.env.close()
        raise
    if problems:
        for r in resolved:
            r.env.close()
        raise SuiteError("\n".join(problems) if len(problems) == 1 else
                         f"{len(problems)} problems in suite {suite.name!r}:\n- " + "\n- ".join(problems))
    return ResolvedSuite(suite, resolved)
