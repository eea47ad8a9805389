"""The revert-search baseline: its one-token inverse edits, and episodes through the env's
tools on shipped tasks (it fixes a flipped comparison, not a dropped statement), as an agent
and as the `revert-search` policy of `rlvr difficulty estimate`."""

import pytest
from rlvr_envs.tasks.repo.baseline import RevertSearchAgent, line_edits

from rlvr_envs.core.multiturn import run_episode


def test_line_edits_undo_one_token_slips():
    edits = line_edits("        if x <= 3 and y is not None:\n")
    assert "        if x < 3 and y is not None:\n" in edits
    assert "        if x <= 4 and y is not None:\n" in edits
    assert "        if x <= 3 or y is not None:\n" in edits
    assert "        if x <= 3 and y is None:\n" in edits
    assert line_edits("    return f(a, b) + 1") == ["    return f(a, b) - 1", "    return f(a, b) + 2",
                                                  "    return f(a, b) + 0", "    return f(b, a) + 1"]
    assert "    if k not in seen:" in line_edits("    if k in seen:")
    assert line_edits("    for k in items:") == []  # never `for k not in`
    assert line_edits('    s = "a < b"') == []  # strings are not code
    assert line_edits("    x = (") == []  # an unfinished line is left alone


@pytest.mark.slow
def test_revert_search_fixes_a_flipped_comparison_through_the_tools(repo_sandbox):
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    env = RepoEditEnv("shipped", sandbox=repo_sandbox, max_turns=200)
    try:
        tasks = {t.source_id: t for t in env.source}
        agent = RevertSearchAgent()
        episode = run_episode(env, agent, task=tasks["intervals-single-point"])
        assert episode.reward == 1.0 and agent.solved and 1 <= agent.tries <= agent.max_tries
        calls = [m["content"] for m in env.messages if m["role"] == "assistant"]
        assert any('"run_tests"' in c for c in calls) and any('"str_replace"' in c for c in calls)
        agent = RevertSearchAgent(max_tries=4)
        episode = run_episode(env, agent, task=tasks["inventory-ship-stock"])  # code deleted
        assert episode.reward == 0.0 and not agent.solved and agent.tries <= 4
    finally:
        env.close()


@pytest.mark.slow
def test_revert_search_policy_measures_pass_rates(repo_sandbox):
    from rlvr_envs.agents.registry import resolve_policy
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    from rlvr_envs.curriculum.difficulty import estimate_pass_rates

    env = RepoEditEnv("shipped", sandbox=repo_sandbox, repos=["intervals"])
    try:
        rates = estimate_pass_rates(env, resolve_policy("revert-search"), k=1)
    finally:
        env.close()
    by_source = {e.source_id: e.pass_rate for e in rates.rates.values()}
    assert by_source == {"intervals-touching": 1.0, "intervals-single-point": 1.0}
