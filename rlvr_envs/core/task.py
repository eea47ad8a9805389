"""The Task record: one problem with its gold answer, provenance and difficulty.

Every family (math, code, repo) speaks this one record. Its `id` is a content hash, so the
same problem has the same id in any process, on any machine, from any source path.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping

TASK_FIELDS = ("id", "prompt", "answer", "family", "source", "source_id", "difficulty", "split",
               "metadata")


@dataclass(frozen=True)
class Difficulty:
    """How hard a task is: a level (1 = easiest) and, once measured, a policy's pass rate."""

    level: int = 1
    pass_rate: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.level, int) or isinstance(self.level, bool) or self.level < 1:
            raise ValueError(f"difficulty level must be an int >= 1, got {self.level!r}")
        if self.pass_rate is not None and not 0.0 <= float(self.pass_rate) <= 1.0:
            raise ValueError(f"pass_rate must be in [0, 1] or None, got {self.pass_rate!r}")

    @classmethod
    def coerce(cls, value: Difficulty | Mapping[str, Any] | int | None) -> Difficulty:
        if value is None:
            return cls()
        if isinstance(value, Difficulty):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(level=value)
        if isinstance(value, Mapping):
            unknown = set(value) - {"level", "pass_rate"}
            if unknown:
                raise ValueError(f"difficulty accepts 'level' and 'pass_rate', got extra {sorted(unknown)}")
            return cls(level=int(value.get("level", 1)), pass_rate=value.get("pass_rate"))
        raise TypeError(f"difficulty must be a Difficulty, a mapping or an int, got {type(value).__name__}")


def content_id(family: str, prompt: str, answer: str) -> str:
    """Stable id from what the task *is*: family, prompt and gold answer."""
    digest = hashlib.sha256(json.dumps([family, prompt, answer]).encode("utf-8")).hexdigest()
    return f"{family}-{digest[:16]}"


@dataclass(frozen=True)
class Task:
    """One verifiable problem. `answer` is the gold as text; `metadata` holds family extras
    (tests for code, the repository snapshot for repo tasks, generator parameters, ...)."""

    prompt: str
    answer: str
    family: str = "custom"
    source: str = "user"
    source_id: str | None = None
    difficulty: Difficulty = field(default_factory=Difficulty)
    split: str = "train"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        for name in ("prompt", "answer", "family", "source", "split"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"Task.{name} must be a str, got {type(value).__name__}: {value!r:.80}")
        if not self.prompt.strip():
            raise ValueError("Task.prompt is empty")
        object.__setattr__(self, "difficulty", Difficulty.coerce(self.difficulty))
        object.__setattr__(self, "metadata", dict(self.metadata or {}))
        if not self.id:
            object.__setattr__(self, "id", content_id(self.family, self.prompt, self.answer))

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], **defaults: Any) -> Task:
        """Build a task from a plain dict; only `prompt` and `answer` are required.
        `defaults` fill fields the record lacks (e.g. the env's family)."""
        if not isinstance(record, Mapping):
            raise TypeError(f"a task record must be a mapping, got {type(record).__name__}")
        missing = [k for k in ("prompt", "answer") if k not in record]
        if missing:
            raise ValueError(f"a task record needs 'prompt' and 'answer'; missing {missing}")
        unknown = set(record) - set(TASK_FIELDS)
        if unknown:
            raise ValueError(f"unknown task fields {sorted(unknown)}; valid fields: {list(TASK_FIELDS)}")
        merged = {**defaults, **record}
        answer = merged["answer"]
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = str(answer)  # a JSON number as the gold: 42 is "42"
        elif not isinstance(answer, str):  # None would become the gold "None"
            raise TypeError(f"a task record's 'answer' must be a str or a number, got "
                            f"{type(answer).__name__} {answer!r:.60}")
        merged["answer"] = answer
        return cls(**merged)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (difficulty as a dict)."""
        out = asdict(self)
        out["metadata"] = dict(self.metadata)
        return out

    def with_pass_rate(self, pass_rate: float | None) -> Task:
        return replace(self, difficulty=Difficulty(self.difficulty.level, pass_rate))

    def matches(self, key: str) -> bool:
        """True when `key` names this task by its content id or its source's own id."""
        return key == self.id or (self.source_id is not None and key == self.source_id)
