"""Ground truth as text: how a task travels to an external trainer and back.

verl keeps `reward_model.ground_truth` in a Parquet column, OpenRLHF sends a `label` string per
sample, TRL passes dataset columns to reward functions. All three carry one string per sample,
and this module is the one codec between that string and a `Task`:

- a JSON task record (`encode_ground_truth`): the full task, metadata included, so a code
  task's hidden tests travel with it (the policy sees only the prompt column, never this one);
- a task id the env's source resolves (a procedural id such as `"arithmetic/L2/1234"`, or a
  dataset task's content id or source id such as `"HumanEval/0"`);
- for families whose scorer needs nothing but the gold answer (math), the bare gold answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    import gymnasium as gym

#: families whose scorer reads only `task.answer`, so a bare gold string is a complete label
ANSWER_ONLY_FAMILIES = frozenset({"math"})
#: the prompt of a task rebuilt from a bare gold answer (the scorer never reads it)
GOLD_ONLY_PROMPT = "(task given by its gold answer only)"


def encode_ground_truth(task: Task) -> str:
    """The task record as compact, key-sorted JSON (stable across processes)."""
    return json.dumps(task.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _record_from_text(text: str) -> Mapping[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    except RecursionError:
        raise ValueError(f"a label nested too deeply to read: {text[:60]!r}...") from None
    return value if isinstance(value, Mapping) and "prompt" in value and "answer" in value else None


def decode_ground_truth(value: Any, env: gym.Env) -> Task:
    """Rebuild the task a label names, for `env` (an unwrapped rlvr env with `.source`).

    Raises ValueError naming what was expected when `value` is none of the accepted forms.
    """
    source = getattr(env, "source", None)
    family = getattr(source, "family", "custom")
    if isinstance(value, Task):
        return value
    if isinstance(value, Mapping):
        return Task.from_dict(value, family=family)
    if not isinstance(value, str):
        raise TypeError(f"ground truth must be a str (task record JSON, task id or gold answer) "
                         f"or a task record object; got {type(value).__name__}")
    if not value.strip():
        raise ValueError("ground truth is empty; expected a task record JSON, a task id or a "
                         "gold answer")
    record = _record_from_text(value)
    if record is not None:
        return Task.from_dict(record, family=family)
    if source is not None:
        try:
            return source.get(value)
        except (KeyError, ValueError, TypeError):
            pass
    if family in ANSWER_ONLY_FAMILIES:
        return Task(prompt=GOLD_ONLY_PROMPT, answer=value, family=family, source="ground_truth")
    raise ValueError(f"ground truth {value!r:.120} is neither a task record JSON (with 'prompt' "
                     f"and 'answer') nor a task id known to {getattr(source, 'name', 'the env')}"
                     f"; family {family!r} needs the full task record")
