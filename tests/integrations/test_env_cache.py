"""Envs built for scoring outside an episode are cached per (id, kwargs) and bounded: every
distinct kwargs a label names builds one, and a code env holds live processes (red team of
2026-12-06: 8 requests with new kwargs left 28 more processes behind)."""

from __future__ import annotations

import pytest

from rlvr_envs.integrations import scoring


class Closing:
    closed = 0

    def close(self) -> None:
        Closing.closed += 1


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setattr(scoring, "_ENVS", type(scoring._ENVS)())
    monkeypatch.setattr(scoring, "MAX_CACHED_ENVS", 3)
    yield scoring._ENVS
    for env in list(scoring._ENVS.values()):
        scoring._release(env)


def test_the_cache_keeps_the_most_recently_used_and_closes_the_rest(fresh_cache, monkeypatch):
    built = []

    class Env:
        def __init__(self, **kwargs):
            self.kwargs, self.scorer, self.unwrapped = kwargs, Closing(), self
            built.append(self)

    monkeypatch.setattr("rlvr_envs.registry.make", lambda env_id, **kwargs: Env(**kwargs))
    Closing.closed = 0
    first = scoring.cached_env("rlvr/Arithmetic-v0", {"difficulty": 1})
    for level in (2, 3):
        scoring.cached_env("rlvr/Arithmetic-v0", {"difficulty": level})
    assert scoring.cached_env("rlvr/Arithmetic-v0", {"difficulty": 1}) is first  # used again
    scoring.cached_env("rlvr/Arithmetic-v0", {"difficulty": 4})  # evicts difficulty 2
    assert len(fresh_cache) == 3 and len(built) == 4 and Closing.closed == 1
    assert [env.kwargs["difficulty"] for env in fresh_cache.values()] == [3, 1, 4]


def test_deep_or_odd_kwargs_are_a_value_error_naming_them():
    with pytest.raises(ValueError, match="nested too deeply"):
        scoring.kwargs_key("[" * 5000)
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["k"] = {}
        node = node["k"]
    with pytest.raises(ValueError, match="plain JSON"):
        scoring.kwargs_key(deep)
    with pytest.raises(TypeError, match="JSON object"):
        scoring.kwargs_key([1])
