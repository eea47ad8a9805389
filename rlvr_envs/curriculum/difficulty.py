"""Measured difficulty: sample k completions per task, store each task's pass rate.

`estimate_pass_rates(env, policy, k=8)` runs a policy (a `Policy` from rlvr_envs.agents, or
any callable `prompt -> completion`) on an env's tasks and grades every completion with the
env's own scorer. `PassRates` saves to and loads from JSON or Parquet (by file suffix), keyed
by task id; `PassRates.get(task_id)` and the `MeasuredDifficulty` wrapper put the rate back into
`info["task"]["difficulty"]["pass_rate"]`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    import gymnasium as gym
    from rlvr_envs.core.policy import Policy
    from rlvr_envs.core.scoring import Scorer

STORE_FORMAT = "rlvr-pass-rates/1"


@dataclass(frozen=True)
class TaskPassRate:
    task_id: str
    successes: int
    samples: int
    source_id: str | None = None

    @property
    def pass_rate(self) -> float:
        return self.successes / self.samples if self.samples else 0.0


@dataclass
class PassRates:
    """Pass rates keyed by task id, with how they were measured."""

    rates: dict[str, TaskPassRate] = field(default_factory=dict)
    env_id: str | None = None
    policy: str | None = None
    k: int | None = None

    def __len__(self) -> int:
        return len(self.rates)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.rates

    def get(self, task_id: str) -> float | None:
        entry = self.rates.get(task_id)
        return None if entry is None else entry.pass_rate

    def as_dict(self) -> dict[str, float]:
        return {task_id: entry.pass_rate for task_id, entry in self.rates.items()}

    def add(self, task: Task, successes: int, samples: int) -> None:
        self.rates[task.id] = TaskPassRate(task.id, successes, samples, task.source_id)

    # -- files ---------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"format": STORE_FORMAT, "env": self.env_id, "policy": self.policy, "k": self.k}
        rows = [{"task_id": e.task_id, "source_id": e.source_id, "successes": e.successes,
                 "samples": e.samples, "pass_rate": e.pass_rate} for e in self.rates.values()]
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            schema = pa.schema([("task_id", pa.string()), ("source_id", pa.string()),
                                ("successes", pa.int64()), ("samples", pa.int64()),
                                ("pass_rate", pa.float64())],
                               metadata={b"rlvr": json.dumps(meta).encode()})
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        elif path.suffix == ".json":
            path.write_text(json.dumps({**meta, "tasks": rows}, indent=1), encoding="utf-8")
        else:
            raise ValueError(f"a pass-rate file ends in .json or .parquet, got {path.name!r}")
        return path

    @classmethod
    def load(cls, path: str | Path) -> PassRates:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no pass-rate file at {path} (make one with "
                                    f"`rlvr difficulty estimate --env ID --policy NAME --out {path}`)")
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            meta = json.loads((table.schema.metadata or {}).get(b"rlvr", b"{}"))
            rows = table.to_pylist()
        elif path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != STORE_FORMAT:
                raise ValueError(f"{path}: not a pass-rate file (expected 'format': "
                                 f"{STORE_FORMAT!r}, got {str(data)[:80]!r})")
            meta, rows = data, data.get("tasks", [])
        else:
            raise ValueError(f"a pass-rate file ends in .json or .parquet, got {path.name!r}")
        out = cls(env_id=meta.get("env"), policy=meta.get("policy"), k=meta.get("k"))
        for row in rows:
            out.rates[row["task_id"]] = TaskPassRate(row["task_id"], int(row["successes"]),
                                                     int(row["samples"]), row.get("source_id"))
        return out

    @classmethod
    def coerce(cls, value: PassRates | Mapping[str, float] | str | Path) -> PassRates:
        """From a PassRates, a file path, or a plain {task_id: pass_rate} mapping."""
        if isinstance(value, PassRates):
            return value
        if isinstance(value, (str, Path)):
            return cls.load(value)
        if isinstance(value, Mapping):
            out = cls()
            for task_id, rate in value.items():
                if not 0.0 <= float(rate) <= 1.0:
                    raise ValueError(f"pass rate of {task_id!r} must be in [0, 1], got {rate!r}")
                # store as successes/samples with enough resolution to round-trip the float
                out.rates[task_id] = TaskPassRate(task_id, round(float(rate) * 10**6), 10**6)
            return out
        raise TypeError(f"pass rates come from a file path, a mapping task_id -> rate or a "
                        f"PassRates, got {type(value).__name__}")


# -- estimating ------------------------------------------------------------------------------------

PromptFn = Callable[[str], str]


def _tasks_of(env: gym.Env, count: int | None, seed: int) -> list[tuple[Task, str, list]]:
    """(task, prompt, messages) for the tasks to measure: every task of a finite source (or the
    first `count`), else `count` tasks drawn by reset seeds seed, seed+1, ..."""
    base = env.unwrapped
    source = getattr(base, "source", None)
    try:
        finite = list(iter(source)) if source is not None else None
    except TypeError:
        finite = None
    out = []
    if finite is not None:
        chosen = finite if count is None else finite[:count]
        for task in chosen:
            prompt, info = env.reset(options={"task": task})
            out.append((_whole(base, info["task"]), prompt, info["messages"]))
        return out
    for i in range(100 if count is None else count):
        prompt, info = env.reset(seed=seed + i)
        out.append((_whole(base, info["task"]), prompt, info["messages"]))
    return out


def _whole(base: gym.Env, record: dict) -> Task:
    """The whole task behind `info["task"]` (an env may hide the gold there)."""
    return base.resolve_task(record) if hasattr(base, "resolve_task") else Task.from_dict(record)


def _sample(policy: Policy | PromptFn, batch: Sequence[tuple[Task, str, list]], k: int,
            scorer: Scorer, seed: int, max_completion_length: int) -> list[list[str]]:
    if hasattr(policy, "generate"):
        from rlvr_envs.core.policy import SamplingParams

        params = SamplingParams(n=k, seed=seed, max_completion_length=max_completion_length)
        groups = policy.generate([m for _, _, m in batch], params,
                                 tasks=[t for t, _, _ in batch], scorers=[scorer] * len(batch))
        return [[c.text if hasattr(c, "text") else str(c) for c in group] for group in groups]
    if callable(policy):
        return [[policy(prompt) for _ in range(k)] for _, prompt, _ in batch]
    raise TypeError(f"policy must have .generate(batch, params) or be a callable prompt -> "
                    f"completion, got {type(policy).__name__}")


def estimate_pass_rates(env: gym.Env | str, policy: Policy | PromptFn, *, k: int = 8,
                        tasks: int | None = None, seed: int = 0, batch_size: int = 16,
                        max_completion_length: int = 512,
                        env_id: str | None = None, policy_name: str | None = None,
                        progress: Callable[[int, int], None] | None = None) -> PassRates:
    """Each task's pass rate over `k` completions of `policy`, graded by the env's scorer
    (`score.correct`). `env` is an env or an id; `tasks` caps how many are measured."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if isinstance(env, str):
        import rlvr_envs

        env_id, env = env, rlvr_envs.make(env)
    scorer = env.unwrapped.scorer
    todo = _tasks_of(env, tasks, seed)
    name = policy_name or getattr(policy, "name", None) or getattr(policy, "__name__", "callable")
    rates = PassRates(env_id=env_id, policy=name, k=k)
    for start in range(0, len(todo), batch_size):
        batch = todo[start:start + batch_size]
        completions = _sample(policy, batch, k, scorer, seed + start, max_completion_length)
        for (task, _, _), group in zip(batch, completions):
            if len(group) != k:
                raise ValueError(f"policy {name!r} returned {len(group)} completions, asked for {k}")
            scores = scorer.score_batch([task] * k, group)
            rates.add(task, sum(bool(s.correct) for s in scores), k)
        if progress is not None:
            progress(min(start + batch_size, len(todo)), len(todo))
    return rates


def default_store_path(env: gym.Env, env_id: str, policy_name: str, suffix: str = ".json") -> Path:
    """Next to the env's data file when its source has one (`source.path`), else under runs/."""
    slug = f"{env_id.replace('/', '_')}.{policy_name.replace('/', '_').replace(':', '_')}"
    data_path = getattr(getattr(env.unwrapped, "source", None), "path", None)
    if data_path:
        data_path = Path(data_path)
        return data_path.with_name(f"{data_path.stem}.pass_rates.{slug}{suffix}")
    return Path("runs") / "difficulty" / f"{slug}{suffix}"


def pass_rate_histogram(rates: Iterable[float], bins: int = 5) -> list[int]:
    counts = [0] * bins
    for rate in rates:
        counts[min(bins - 1, int(rate * bins))] += 1
    return counts


__all__ = ["PassRates", "TaskPassRate", "default_store_path", "estimate_pass_rates",
           "pass_rate_histogram"]
