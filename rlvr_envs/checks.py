"""Health checks behind `rlvr check`: gymnasium's check_env, seed determinism, and the
audit that a gold completion scores 1 and an empty completion scores 0."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Iterator

from gymnasium.utils.env_checker import check_env

from rlvr_envs.core.multiturn import MultiTurnEnv, run_episode
from rlvr_envs.registry import env_entry, make

if TYPE_CHECKING:
    import gymnasium as gym

CheckResult = tuple[str, bool, str]


def check_env_id(env_id: str, samples: int = 5) -> Iterator[CheckResult]:
    """Yield (check name, passed, detail) for one registered id."""
    try:
        env = make(env_id, **env_entry(env_id).check_kwargs)
    except Exception as err:  # noqa: BLE001 - reported, not raised
        yield "make", False, f"{type(err).__name__}: {err}"
        return
    try:
        yield from _run_checks(env, samples)
    finally:
        env.close()


def _run_checks(env: gym.Env, samples: int) -> Iterator[CheckResult]:
    base = env.unwrapped
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(base, skip_render_check=True)
        yield "check_env", True, ""
    except Exception as err:  # noqa: BLE001
        yield "check_env", False, f"{type(err).__name__}: {err}"

    ids_a = [base.reset(seed=s)[1]["task"]["id"] for s in range(samples)]
    ids_b = [base.reset(seed=s)[1]["task"]["id"] for s in range(samples)]
    yield "seed determinism", ids_a == ids_b, "" if ids_a == ids_b else f"{ids_a} != {ids_b}"

    if isinstance(base, MultiTurnEnv):
        yield from _audit_multiturn(base, samples)
        return

    bad_gold, bad_empty = [], []
    for seed in range(samples):
        _, info = base.reset(seed=seed)
        task = base.resolve_task(info["task"]["id"]) if hasattr(base, "resolve_task") else None
        gold = base.scorer.gold_completion(task)
        _, reward, *_ , step_info = base.step(gold)
        if reward != 1.0:
            bad_gold.append(f"{info['task']['id']}: {reward} ({step_info.get('verifier')})")
        base.reset(seed=seed)
        _, reward, *_ = base.step("")
        if reward != 0.0:
            bad_empty.append(f"{info['task']['id']}: {reward}")
    yield "gold scores 1", not bad_gold, "; ".join(bad_gold[:3])
    yield "empty scores 0", not bad_empty, "; ".join(bad_empty[:3])


def _audit_multiturn(base: MultiTurnEnv, samples: int) -> Iterator[CheckResult]:
    """Multi-turn envs: the env's scripted gold agent scores 1 and its null agent 0."""
    agents = base.scripted_agents()
    if not {"gold", "null"} <= set(agents):
        yield "scripted agents", False, "the env offers no 'gold' and 'null' scripted agents"
        return
    bad_gold, bad_null = [], []
    for seed in range(samples):
        for name, want, bad in (("gold", 1.0, bad_gold), ("null", 0.0, bad_null)):
            episode = run_episode(base, agents[name], seed=seed)
            if episode.reward != want:
                bad.append(f"{episode.info['task']['id']}: {episode.reward} "
                           f"({episode.info.get('verifier')})")
    yield "gold agent scores 1", not bad_gold, "; ".join(bad_gold[:3])
    yield "null agent scores 0", not bad_null, "; ".join(bad_null[:3])
