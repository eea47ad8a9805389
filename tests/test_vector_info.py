"""Every family's vector env steps through a mix of outcomes (gold, empty, hostile) in sync and
async mode and closes: an info key keeps one type in every outcome (a numeric key that were
None in one outcome would make gymnasium's info arrays raise, and an async env then hang)."""

from __future__ import annotations

import numbers

import gymnasium as gym
import pytest

import rlvr_envs  # noqa: F401 - registers the ids

#: one id per family, with kwargs that keep an episode short
FAMILIES = {"math": ("rlvr/Math-v0", {}), "code": ("rlvr/Code-v0", {}),
            "reasoning": ("rlvr/ReasoningGym-v0", {}), "repo": ("rlvr/RepoEdit-v0", {"max_turns": 3})}
HOSTILE = "x" * 2_000_000  # past every action space: too_long
#: families whose id needs an optional package (its extra is in [all], which CI installs)
NEEDS = {"reasoning": "reasoning_gym"}


def _scripts(env_id, kwargs, seed):
    """Per sub-env actions: the gold ones, empty ones, hostile ones (vector seeds are seed+i)."""
    family = next(name for name, (id_, _) in FAMILIES.items() if id_ == env_id)
    if family in NEEDS:
        pytest.importorskip(NEEDS[family])
    env = gym.make(env_id, **kwargs).unwrapped
    _, info = env.reset(seed=seed)
    task = env.resolve_task(info["task"])
    scorer = env.scorer
    gold = list(scorer.gold_actions(task)) if hasattr(scorer, "gold_actions") \
        else [scorer.gold_completion(task)]
    env.close()
    return [gold, [""] * len(gold), [HOSTILE] * len(gold)]


def _kind(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Number):
        return "number"
    return "other"  # str, None, dict, list: object arrays in a vector env


def families():
    """Every family; repo episodes (a pytest run each) only in the slow suite."""
    return [pytest.param(f, marks=pytest.mark.slow) if f == "repo" else f for f in sorted(FAMILIES)]


@pytest.mark.parametrize("family", families())
def test_info_keys_keep_one_type_across_outcomes(family):
    env_id, kwargs = FAMILIES[family]
    kinds: dict[str, set] = {}
    scripts = _scripts(env_id, kwargs, seed=3)
    env = gym.make(env_id, **kwargs)
    for script in scripts:
        env.reset(seed=3)
        for action in script + [HOSTILE] * 5:
            _, _, terminated, truncated, info = env.step(action)
            for key, value in info.items():
                kinds.setdefault(key, set()).add(_kind(value))
            if terminated or truncated:
                break
        assert terminated or truncated
    env.close()
    mixed = {key: sorted(found) for key, found in kinds.items() if len(found) > 1}
    assert not mixed, f"{env_id}: info keys of more than one type: {mixed}"


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("family", families())
def test_vector_env_steps_a_mix_of_outcomes_and_closes(family, mode):
    env_id, kwargs = FAMILIES[family]
    scripts = [_scripts(env_id, kwargs, seed=3)[0]]  # env 0 plays its gold actions
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode, **kwargs)
    failed = True
    try:
        envs.reset(seed=3)
        gold = scripts[0]
        ended = [False] * 3
        rewards_seen = []
        for turn in range(len(gold) + 5):
            actions = (gold[min(turn, len(gold) - 1)], "", HOSTILE)
            _, rewards, terminated, truncated, infos = envs.step(actions)
            rewards_seen.append(list(rewards))
            ended = [e or bool(t or u) for e, t, u in zip(ended, terminated, truncated)]
            if all(ended):
                break
        assert all(ended), f"{env_id}: episodes did not end: {ended}"
        assert max(r[0] for r in rewards_seen) == 1.0  # the gold sub-env scored 1
        assert all(r[1] == 0.0 and r[2] == 0.0 for r in rewards_seen)
        failed = False
    finally:
        # after a failed step an async env's workers may never answer a polite close
        envs.close(**({"terminate": True} if failed and mode == "async" else {}))
    assert envs.closed
