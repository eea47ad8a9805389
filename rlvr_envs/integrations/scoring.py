"""Scoring for callers outside an episode: (env id, ground truth, completion) → result.

Every integration (verl's compute_score, TRL reward functions, the HTTP server's process pool,
Ray tasks) ends here, and this ends in the env's own scorer, so a reward computed remotely is
the reward `env.step` would have returned. Envs are built once per process and cached.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rlvr_envs.core.scoring import Score, check_completion, zero_score
from rlvr_envs.core.task import Task
from rlvr_envs.integrations.ground_truth import decode_ground_truth

if TYPE_CHECKING:
    import gymnasium as gym

#: envs built in this process, least recently used first; beyond `MAX_CACHED_ENVS` the oldest
#: is closed (its sandbox and fork servers with it): every distinct kwargs a label names builds
#: one, and a code env holds live processes
_ENVS: OrderedDict[tuple[str, str], Any] = OrderedDict()
_ENVS_LOCK = threading.Lock()
MAX_CACHED_ENVS = 8

#: one item of work: (env id, env kwargs as JSON, ground truth, completion)
ScoreItem = tuple[str, str, Any, str]


def kwargs_key(env_kwargs: Mapping[str, Any] | str | None) -> str:
    """Env kwargs as canonical JSON (the cache key, and how kwargs travel in datasets)."""
    if env_kwargs is None or env_kwargs == "":
        return "{}"
    if isinstance(env_kwargs, str):
        try:
            env_kwargs = json.loads(env_kwargs)
        except json.JSONDecodeError as err:
            raise ValueError(f"env kwargs must be a JSON object, got {env_kwargs!r:.80}: "
                             f"{err}") from None
        except RecursionError:
            raise ValueError(f"env kwargs nested too deeply to read: {env_kwargs[:60]!r}...") \
                from None
    if not isinstance(env_kwargs, Mapping):
        raise TypeError(f"env kwargs must be a JSON object, got {type(env_kwargs).__name__} "
                        f"{_short(env_kwargs)}")
    try:
        return json.dumps(dict(env_kwargs), sort_keys=True)
    except (RecursionError, TypeError, ValueError) as err:
        raise ValueError(f"env kwargs must be plain JSON no deeper than Python reads: "
                         f"{type(err).__name__}") from None


def _short(value: Any) -> str:
    """At most 80 characters of `value`'s repr (none where it cannot be made)."""
    try:
        return repr(value)[:80]
    except (RecursionError, ValueError):
        return "(no repr)"


def cached_env(env_id: str, env_kwargs: Mapping[str, Any] | str | None = None) -> Any:
    """The unwrapped env for (id, kwargs), built on first use in this process."""
    key = (env_id, kwargs_key(env_kwargs))
    with _ENVS_LOCK:
        env = _ENVS.get(key)
        if env is not None:
            _ENVS.move_to_end(key)
            return env
    from rlvr_envs.registry import make

    env = make(env_id, **json.loads(key[1])).unwrapped
    with _ENVS_LOCK:
        if key in _ENVS:  # built meanwhile by another thread: keep that one
            _release(env)
            return _ENVS[key]
        _ENVS[key] = env
        evicted = [_ENVS.popitem(last=False)[1] for _ in range(len(_ENVS) - MAX_CACHED_ENVS)]
    for old in evicted:
        _release(old)
    return env


def _release(env: Any) -> None:
    """Close an env and its scorer (a code scorer's sandbox stops its fork servers)."""
    for close in (getattr(getattr(env, "scorer", None), "close", None), getattr(env, "close", None)):
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001 - a failed close leaves processes to exit handlers
                pass


def score_completion(env: gym.Env, task: Task, completion: str) -> Score:
    """Score as `env.step` does: the action-space length cap first, then the env's scorer."""
    too_long = check_completion(completion, env.action_space.max_length)
    if too_long:
        return zero_score(too_long, env.scorer.components)
    return env.scorer.score(task, completion)


def score_one(env_id: str, ground_truth: Any, completion: str,
              env_kwargs: Mapping[str, Any] | str | None = None) -> tuple[Task, Score]:
    env = cached_env(env_id, env_kwargs)
    task = decode_ground_truth(ground_truth, env)
    return task, score_completion(env, task, completion)


def to_jsonable(value: Any) -> Any:
    """Plain JSON types only (numpy scalars unwrapped, non-finite floats as None)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return to_jsonable(value.tolist())
    return str(value)


def result_record(task: Task | None, score: Score) -> dict[str, Any]:
    """What crosses a process or network boundary for one scored completion."""
    return {
        "ok": True,
        "reward": float(score.reward),
        "correct": bool(score.correct),
        "verifier": score.verifier,
        "extracted_answer": score.extracted_answer,
        "breakdown": to_jsonable(score.breakdown),
        "details": to_jsonable(score.details),
        "task_id": task.id if task is not None else None,
    }


def error_record(reason: str, message: str) -> dict[str, Any]:
    """A completion that could not be scored: `reason` "bad_ground_truth" is the caller's
    fault (a 4xx for the server); anything else scores 0 with the reason."""
    return {"ok": False, "reward": 0.0, "correct": False, "verifier": reason,
            "extracted_answer": None, "breakdown": {}, "details": {"error": message},
            "task_id": None}


def score_item(item: ScoreItem) -> dict[str, Any]:
    """One item → a result record; never raises (a failure is a record with the reason)."""
    env_id, env_kwargs, ground_truth, completion = item
    try:
        env = cached_env(env_id, env_kwargs)
    except Exception as err:  # noqa: BLE001 - reported to the caller as a record
        return error_record("bad_env", f"{type(err).__name__}: {err}")
    try:
        task = decode_ground_truth(ground_truth, env)
    except (ValueError, TypeError, KeyError) as err:
        return error_record("bad_ground_truth", f"{type(err).__name__}: {err}")
    try:
        return result_record(task, score_completion(env, task, completion))
    except Exception as err:  # noqa: BLE001 - a verifier crash scores 0, it never kills the caller
        return error_record("scorer_error", f"{type(err).__name__}: {err}")


def score_items(items: Sequence[ScoreItem]) -> list[dict[str, Any]]:
    """A batch of items, in order (the unit of work sent to pool workers and Ray tasks)."""
    return [score_item(item) for item in items]
