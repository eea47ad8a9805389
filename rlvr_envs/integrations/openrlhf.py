"""OpenRLHF's remote-reward contract, shared by the HTTP server and a local reward function.

OpenRLHF (`--reward.remote_url`, formerly `--remote_rm_url`) POSTs
`{"query": [...], "prompts": [...], "labels": [...]}` to the URL: `query` is the decoded
prompt + response (special tokens kept), `prompts` the prompt text, `labels` the dataset's label
column. It reads `rewards` (advantages), `scores` (0-1, dynamic filtering) and `extra_logs`
(per-sample numbers logged to wandb) from the JSON reply. The same triple is the signature of a
local `reward_func(queries, prompts, labels, **kwargs)` file, which this module also is: pass
its path as `--reward.remote_url` to score in-process (env from $RLVR_ENV, default
rlvr/Math-v0).

A label is a ground truth (see `ground_truth`): a task record JSON, a task id, or for math the
gold answer; `{"env": ID, "env_kwargs": {...}, "task": <ground truth>}` names another env.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from rlvr_envs.integrations.scoring import ScoreItem, error_record, kwargs_key, score_items

PROMPT_NOT_IN_QUERY = "prompt_not_in_query"


#: where an assistant turn starts in the chat templates of common model families (ChatML:
#: Qwen, SmolLM; Llama 3; DeepSeek; Llama 2 / Mistral; Gemma; Phi-3)
ASSISTANT_TURN_MARKERS = ("<|im_start|>assistant", "<|start_header_id|>assistant<|end_header_id|>",
                          "<｜Assistant｜>", "[/INST]", "<start_of_turn>model", "<|assistant|>")


def response_from_query(query: str, prompt: str | None) -> str | None:
    """The model's response inside an OpenRLHF query: what follows the prompt. None when the
    prompt is given but absent (scoring the whole query would let the prompt's own example
    answers count). Without a prompt, what follows the last assistant-turn marker of a known
    chat template (`ASSISTANT_TURN_MARKERS`), or the whole query where it has none."""
    if not prompt:
        cut = max((at + len(marker) for marker in ASSISTANT_TURN_MARKERS
                   if (at := query.rfind(marker)) >= 0), default=0)
        return query[cut:]
    if query.startswith(prompt):
        return query[len(prompt):]
    at = query.find(prompt)
    return query[at + len(prompt):] if at >= 0 else None


def numeric_label(value: int | float) -> str:
    """The gold text of a numeric label: 42 -> "42", 2.0 -> "2", 0.25 -> "0.25"."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"a numeric label must be finite, got {value!r}")
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value)


def item_for_label(label: Any, response: str, default_env: str,
                   default_kwargs: Mapping[str, Any] | str | None) -> ScoreItem:
    """A score item; a label object (or JSON) with an "env" key routes to that env."""
    if isinstance(label, bool):
        raise ValueError(f"a label must be a task record, a task id or a gold answer, got the "
                         f"boolean {label!r}")
    if isinstance(label, (int, float)):  # OpenRLHF datasets often carry numeric answers
        label = numeric_label(label)
    env_id, env_kwargs, ground_truth = default_env, default_kwargs, label
    routed = label
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            routed = json.loads(label)
        except json.JSONDecodeError:
            routed = label
        except RecursionError:
            raise ValueError(f"a label nested too deeply to read: {label[:60]!r}...") from None
    if isinstance(routed, Mapping) and "env" in routed:
        env_id = routed["env"]
        env_kwargs = routed.get("env_kwargs") or None
        ground_truth = routed.get("task")
        if not isinstance(env_id, str):
            raise ValueError(f"label 'env' must be an env id string, got {env_id!r:.60}")
    return env_id, kwargs_key(env_kwargs), ground_truth, response


def build_items(queries: Sequence[str], prompts: Sequence[str] | None, labels: Sequence[Any],
                default_env: str, default_kwargs: Mapping[str, Any] | str | None = None
                ) -> tuple[list[ScoreItem | None], list[dict[str, Any] | None]]:
    """Items to score, with a ready record in place of items that cannot be scored."""
    items: list[ScoreItem | None] = []
    ready: list[dict[str, Any] | None] = []
    for i, query in enumerate(queries):
        response = response_from_query(query, prompts[i] if prompts is not None else None)
        if response is None:
            items.append(None)
            ready.append(error_record(PROMPT_NOT_IN_QUERY, "the prompt text does not occur in "
                                      "the query, so the response cannot be cut out of it"))
            continue
        try:
            items.append(item_for_label(labels[i], response, default_env, default_kwargs))
        except (ValueError, TypeError) as err:
            raise type(err)(f"label {i}: {err}") from None
        ready.append(None)
    return items, ready


def reply(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """OpenRLHF's reply shape, plus per-sample `details` (verifier reason, extracted answer,
    task id), which OpenRLHF ignores."""
    rewards = [float(r["reward"]) for r in records]
    return {
        "rewards": rewards,
        "scores": [1.0 if r["correct"] else 0.0 for r in records],
        "extra_logs": {"correct": [1.0 if r["correct"] else 0.0 for r in records],
                       "too_long": [1.0 if r["verifier"] == "too_long" else 0.0 for r in records]},
        "details": [{"verifier": r["verifier"], "extracted_answer": r["extracted_answer"],
                     "task_id": r["task_id"], "breakdown": r["breakdown"],
                     **({"error": r["details"]["error"]} if not r["ok"] else {})}
                    for r in records],
    }


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any],
                **_: Any) -> dict[str, Any]:
    """OpenRLHF's local reward function (`--reward.remote_url /path/to/openrlhf.py`)."""
    items, ready = build_items(queries, prompts, labels, os.environ.get("RLVR_ENV", "rlvr/Math-v0"))
    scored = iter(score_items([item for item in items if item is not None]))
    records = [r if r is not None else next(scored) for r in ready]
    bad = [i for i, r in enumerate(records) if r["verifier"] in ("bad_ground_truth", "bad_env")]
    if bad:
        raise ValueError(f"labels {bad} cannot be scored: {records[bad[0]]['details']['error']}")
    return reply(records)


def openrlhf_label(env_id: str, task: Any, env_kwargs: Mapping[str, Any] | str | None = None) -> str:
    """A self-routing label: the env id, its kwargs and the full task record."""
    return json.dumps({"env": env_id, "env_kwargs": json.loads(kwargs_key(env_kwargs)),
                       "task": task.to_dict()}, ensure_ascii=False, sort_keys=True)


def export_openrlhf(env_id: str, n: int, out: str | os.PathLike, *, seed: int = 0,
                    env_kwargs: Mapping[str, Any] | str | None = None) -> int:
    """Write `n` tasks as OpenRLHF prompt-dataset JSONL; returns the number written."""
    from pathlib import Path

    from rlvr_envs.integrations.task_rows import task_rows

    rows = task_rows(env_id, n, seed=seed, env_kwargs=env_kwargs)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({"prompt": row.messages,
                                     "label": openrlhf_label(env_id, row.task, env_kwargs)},
                                    ensure_ascii=False) + "\n")
    return len(rows)
