"""Held-out scores of a local model on an env's tasks (greedy by default), through the env's
scorer for single-turn envs and the env's own steps for multi-turn ones."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from rlvr_envs.agents.data import TaskRow

if TYPE_CHECKING:
    import gymnasium as gym

    from rlvr_envs.core.scoring import Scorer


def score_model(model: Any, tokenizer: Any, rows: Sequence[TaskRow], scorer: Scorer, *,
                max_completion_length: int = 64, temperature: float = 0.0, batch_size: int = 16
                ) -> dict[str, float]:
    """Mean reward and pass rate (fraction verified correct) over `rows`, one sample each."""
    from rlvr_envs.agents.generation import sample_chats

    if not rows:
        return {"reward": float("nan"), "pass_rate": float("nan"), "tasks": 0}
    samples = sample_chats(model, tokenizer, [r.messages for r in rows], batch_size=batch_size,
                           n=1, max_completion_length=max_completion_length,
                           temperature=temperature)
    scores = scorer.score_batch([r.task for r in rows], [g[0].text for g in samples])
    return {"reward": sum(s.reward for s in scores) / len(scores),
            "pass_rate": sum(bool(s.correct) for s in scores) / len(scores),
            "tasks": len(scores)}


def score_model_multi_turn(model: Any, tokenizer: Any, rows: Sequence[TaskRow], env: gym.Env, *,
                           max_turns: int = 8, max_turn_tokens: int = 64,
                           max_total_tokens: int = 512) -> dict[str, float]:
    """Mean final reward and pass rate of greedy multi-turn episodes."""
    from rlvr_envs.agents.multiturn import token_rollout

    rewards, correct = [], []
    for row in rows:
        episode = token_rollout(model, tokenizer, env, row.task, max_turns=max_turns,
                                max_turn_tokens=max_turn_tokens, max_total_tokens=max_total_tokens,
                                temperature=0.0)
        rewards.append(episode.reward)
        correct.append(episode.reward >= 1.0)
    n = max(len(rows), 1)
    return {"reward": sum(rewards) / n, "pass_rate": sum(correct) / n, "tasks": len(rows)}
