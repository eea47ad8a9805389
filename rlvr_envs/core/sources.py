"""Task sources: where an env's tasks come from.

A source hands out Task records deterministically from a numpy Generator (the env's
`np_random`), so the same seed gives the same task in any process. Two kinds:

- `TaskList`: a finite list (a dataset split, shipped tasks); lookup by content id or the
  source's own id (e.g. "HumanEval/0").
- `ProceduralSource`: generators `fn(rng: random.Random, level: int) -> Generated`; a task's
  source id "<generator>/L<level>/<seed>" regenerates it exactly.
"""

from __future__ import annotations

import difflib
import random
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from rlvr_envs.core.task import Difficulty, Task

GoldValidator = Callable[[str], None]
"""Raises ValueError when a gold answer cannot be scored; sources call it at load time."""


class TaskSource:
    """Base class. `family` and `name` fill the records' provenance."""

    family: str = "custom"
    name: str = "custom"

    def sample(self, rng: np.random.Generator) -> Task:  # pragma: no cover - abstract
        raise NotImplementedError

    def get(self, key: str) -> Task:  # pragma: no cover - abstract
        raise NotImplementedError

    def __iter__(self) -> Iterator[Task]:  # pragma: no cover - finite sources override
        raise TypeError(f"{type(self).__name__} is not a finite list of tasks")


def resolve_task(source: TaskSource, task: Task | Mapping[str, Any] | str) -> Task:
    """A Task from a record, a plain dict with at least prompt and answer (the source's family
    filled in), or an id / source id that `source` knows."""
    if isinstance(task, Task):
        return task
    if isinstance(task, str):
        return source.get(task)
    if isinstance(task, Mapping):
        return Task.from_dict(task, family=source.family)
    raise TypeError(f"options['task'] must be a Task, a dict with 'prompt' and 'answer', or a "
                    f"task id string; got {type(task).__name__}")


class TaskList(TaskSource):
    """A finite, validated list of tasks."""

    def __init__(self, tasks: Iterable[Task], *, family: str, name: str,
                 validate: GoldValidator | None = None):
        self.family, self.name = family, name
        self._tasks: list[Task] = []
        for task in tasks:
            if validate is not None:
                try:
                    validate(task.answer)
                except ValueError as err:
                    where = task.source_id or task.id
                    raise ValueError(f"{name}: task {where} has a gold answer that cannot be "
                                     f"scored ({task.answer!r:.80}): {err}") from err
            self._tasks.append(task)
        if not self._tasks:
            raise ValueError(f"{name}: no tasks to serve")
        self._by_key: dict[str, Task] = {}
        for task in self._tasks:
            self._by_key[task.id] = task
            if task.source_id is not None:
                self._by_key.setdefault(task.source_id, task)

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks)

    def __getitem__(self, index: int) -> Task:
        return self._tasks[index]

    def sample(self, rng: np.random.Generator) -> Task:
        return self._tasks[int(rng.integers(len(self._tasks)))]

    def get(self, key: str) -> Task:
        try:
            return self._by_key[key]
        except KeyError:
            close = difflib.get_close_matches(key, list(self._by_key), n=3)
            hint = f"; close matches: {close}" if close else ""
            raise KeyError(f"{self.name}: no task with id or source id {key!r}{hint}") from None


@dataclass
class Generated:
    """What a procedural generator returns."""

    prompt: str
    answer: str
    metadata: dict[str, Any] = field(default_factory=dict)


Generator = Callable[[random.Random, int], Generated]
_PROCEDURAL_ID = re.compile(r"^(?P<gen>[\w.-]+)/L(?P<level>\d+)/(?P<seed>\d+)$")


class ProceduralSource(TaskSource):
    """Tasks made on demand by generators, at integer difficulty levels.

    `levels` is the set of levels to sample from (uniformly); `weights` optionally weights the
    generators. A generator must be a pure function of (seeded rng, level). `get(task_id)`
    finds the last `SEEN_LIMIT` tasks made by this source; a procedural id
    '<generator>/L<level>/<seed>' is always found (it is remade).
    """

    SEEN_LIMIT = 32_768

    def __init__(self, generators: Mapping[str, Generator], *, family: str, name: str,
                 levels: Sequence[int] = (1, 2, 3), weights: Mapping[str, float] | None = None,
                 validate: GoldValidator | None = None, max_level: int = 10):
        if not generators:
            raise ValueError(f"{name}: no generators given")
        bad = [lvl for lvl in levels if not isinstance(lvl, int) or not 1 <= lvl <= max_level]
        if bad or not levels:
            raise ValueError(f"{name}: levels must be ints in 1..{max_level}, got {list(levels)}")
        self.family, self.name = family, name
        self.generators = dict(generators)
        self.levels = tuple(levels)
        self.max_level = max_level
        names = list(self.generators)
        w = np.array([float((weights or {}).get(n, 1.0)) for n in names])
        self._names, self._probs = names, w / w.sum()
        self._validate = validate
        self._seen: OrderedDict[str, Task] = OrderedDict()

    def make(self, generator: str, level: int, seed: int) -> Task:
        if generator not in self.generators:
            raise KeyError(f"{self.name}: unknown generator {generator!r}; "
                           f"known: {sorted(self.generators)}")
        made = self.generators[generator](random.Random(seed), level)
        if self._validate is not None:
            self._validate(made.answer)  # a generator bug must fail here, not at scoring time
        task = Task(prompt=made.prompt, answer=made.answer, family=self.family, source=self.name,
                    source_id=f"{generator}/L{level}/{seed}", difficulty=Difficulty(level),
                    metadata={"generator": generator, "level": level, "seed": seed,
                              **made.metadata})
        self._seen[task.id] = task
        self._seen.move_to_end(task.id)
        while len(self._seen) > self.SEEN_LIMIT:
            self._seen.popitem(last=False)
        return task

    def sample(self, rng: np.random.Generator, level: int | None = None) -> Task:
        generator = self._names[int(rng.choice(len(self._names), p=self._probs))]
        chosen = self.levels[int(rng.integers(len(self.levels)))]
        seed = int(rng.integers(2**31 - 1))
        return self.make(generator, level if level is not None else chosen, seed)

    def get(self, key: str) -> Task:
        if key in self._seen:
            return self._seen[key]
        match = _PROCEDURAL_ID.match(key)
        if match is None:
            raise KeyError(f"{self.name}: {key!r} is neither a task id made recently in this "
                           f"process nor a procedural id '<generator>/L<level>/<seed>' "
                           f"(generators: {sorted(self.generators)})")
        return self.make(match["gen"], int(match["level"]), int(match["seed"]))
