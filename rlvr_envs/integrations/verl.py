"""verl: export an env's tasks as verl RL datasets, and score them with `compute_score`.

Dataset rows follow verl's RL dataset schema (as in verl's `examples/data_preprocess/gsm8k.py`
and read by `verl.utils.dataset.rl_dataset.RLHFDataset`)::

    data_source   the env id, e.g. "rlvr/Math-v0" (verl's reward managers pass it back)
    prompt        chat messages [{"role": "system", ...}, {"role": "user", ...}]
    ability       the env family ("math", "code", ...)
    reward_model  {"style": "rule", "ground_truth": <task record as JSON>}
    extra_info    {"split", "index", "task_id", "source_id", "difficulty", "pass_rate",
                   "env_kwargs" (JSON)}

Point verl at the scorer with::

    custom_reward_function.path=pkg://rlvr_envs.integrations.verl
    custom_reward_function.name=compute_score

verl's reward managers call `compute_score(data_source=, solution_str=, ground_truth=,
extra_info=)` (plus `reward_kwargs` from the config, and router arguments in the reward loop);
a dict result must carry "score", and its other keys land in `reward_extra_info` — the same keys
for every sample, so this returns a fixed set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlvr_envs.integrations.ground_truth import encode_ground_truth
from rlvr_envs.integrations.scoring import kwargs_key, score_one
from rlvr_envs.integrations.task_rows import TaskRow, task_rows


def verl_row(env_id: str, row: TaskRow, *, split: str, index: int, env_kwargs: str) -> dict[str, Any]:
    task = row.task
    return {
        "data_source": env_id,
        "prompt": row.messages,
        "ability": task.family,
        "reward_model": {"style": "rule", "ground_truth": encode_ground_truth(task)},
        "extra_info": {
            "split": split,
            "index": index,
            "task_id": task.id,
            "source_id": task.source_id or "",
            "difficulty": task.difficulty.level,
            "pass_rate": task.difficulty.pass_rate,
            "env_kwargs": env_kwargs,
        },
    }


def export_verl(env_id: str, n: int, out_dir: str | os.PathLike, *, test_n: int | None = None,
                seed: int = 0, env_kwargs: Mapping[str, Any] | str | None = None) -> dict[str, Path]:
    """Write `train.parquet` (n tasks) and `test.parquet` (test_n other tasks; default n // 10,
    at least 1) into `out_dir`. Returns the paths by split."""
    import datasets

    test_n = max(1, n // 10) if test_n is None else test_n
    if n < 1 or test_n < 0:
        raise ValueError(f"need n >= 1 and test_n >= 0, got n={n}, test_n={test_n}")
    key = kwargs_key(env_kwargs)
    rows = task_rows(env_id, n + test_n, seed=seed, env_kwargs=key)
    if len(rows) < n + test_n:
        raise ValueError(f"{env_id} yielded {len(rows)} distinct tasks; asked for {n} train + "
                         f"{test_n} test")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split, chunk in (("train", rows[:n]), ("test", rows[n:])):
        records = [verl_row(env_id, row, split=split, index=i, env_kwargs=key)
                   for i, row in enumerate(chunk)]
        paths[split] = out / f"{split}.parquet"
        if records:
            datasets.Dataset.from_list(records).to_parquet(str(paths[split]))
        else:
            paths.pop(split)
    return paths


def compute_score(data_source: str, solution_str: str, ground_truth: Any,
                  extra_info: Mapping[str, Any] | None = None, **_: Any) -> dict[str, Any]:
    """verl's custom_reward_function: score `solution_str` (the decoded response) against the
    task in `ground_truth`, with the env named by `data_source`.

    Returns {"score": reward, "acc": 1.0/0.0, "pred": extracted answer or "", "verifier":
    reason}. Extra keyword arguments (verl's reward_kwargs, reward-loop router fields) are
    accepted and ignored.
    """
    env_kwargs = (extra_info or {}).get("env_kwargs") or None
    try:
        _, score = score_one(data_source, ground_truth, solution_str, env_kwargs)
    except (ValueError, TypeError, KeyError) as err:
        raise ValueError(f"rlvr compute_score: cannot score a sample of {data_source!r}: {err}") from err
    return {"score": float(score.reward), "acc": 1.0 if score.correct else 0.0,
            "pred": score.extracted_answer or "", "verifier": score.verifier}

