"""Import of SWE-bench / SWE-Gym records, graded the same way as every repo task.

A record has SWE-bench's field names: `instance_id`, `repo`, `base_commit`, `patch` (gold),
`test_patch` (tests added by the fix: hidden from the agent, applied at grading),
`problem_statement`, `FAIL_TO_PASS` and `PASS_TO_PASS` (lists, or JSON strings of lists, as
the Hugging Face datasets store them), `version`, `environment_setup_commit`, optional
`hints_text` and `created_at`. You need a local clone of each repository
(`repos_dir/<owner>__<name>` or a mapping repo → path); the workspace gets the tree at `base_commit` without any history.
Their Docker images are yours to supply (`sandbox=DockerSandbox(image=...)`): our grading
runs `python -m pytest <ids>` there with the repo's own configuration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from rlvr_envs.tasks.repo.records import make_repo_task

from rlvr_envs.core.task import Task

SWE_FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
              "FAIL_TO_PASS", "PASS_TO_PASS")


def _id_list(value: Any, field: str, instance: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as err:
            raise ValueError(f"{instance}: {field} is a string but not a JSON list: "
                             f"{err}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{instance}: {field} must be a list of test ids (or its JSON), "
                         f"got {type(value).__name__}")
    return value


def repo_path(record_repo: str, repos: Path | Mapping[str, str | Path]) -> Path:
    if isinstance(repos, Mapping):
        if record_repo not in repos:
            raise KeyError(f"no local clone given for {record_repo!r}; known: {sorted(repos)}")
        return Path(repos[record_repo])
    return Path(repos) / record_repo.replace("/", "__")


def import_swebench_record(record: Mapping[str, Any], repos: Path | Mapping[str, str | Path], *,
                           source: str = "swe-bench", split: str = "test",
                           test_timeout: float = 1800) -> Task:
    """One SWE-bench / SWE-Gym record as a repo Task."""
    instance = str(record.get("instance_id", "?"))
    missing = [f for f in SWE_FIELDS if f not in record]
    if missing:
        raise ValueError(f"{instance}: not a SWE-bench record, missing {missing} "
                         f"(expected fields {list(SWE_FIELDS)})")
    clone = repo_path(record["repo"], repos)
    if not (clone / ".git").exists():
        raise FileNotFoundError(f"{instance}: no git clone of {record['repo']} at {clone}")
    f2p = _id_list(record["FAIL_TO_PASS"], "FAIL_TO_PASS", instance)
    p2p = _id_list(record["PASS_TO_PASS"], "PASS_TO_PASS", instance)
    test_files = sorted({t.split("::")[0] for t in f2p + p2p})
    return make_repo_task(
        statement=record["problem_statement"], repo=record["repo"],
        snapshot=f"git:{clone.resolve()}", gold_patch=record["patch"], fail_to_pass=f2p,
        pass_to_pass=p2p, source=source, source_id=instance, split=split,
        base_commit=record["base_commit"], test_patch=record["test_patch"] or "",
        visible_tests=[], visible_tests_files=test_files, test_timeout=test_timeout,
        version=record.get("version"),
        environment_setup_commit=record.get("environment_setup_commit"),
        hints_text=record.get("hints_text", ""))


def import_swebench(records: Iterable[Mapping[str, Any]] | str | Path,
                    repos: Path | Mapping[str, str | Path], **kwargs: Any) -> list[Task]:
    """Records from an iterable (e.g. a `datasets.Dataset`) or a JSON/JSONL file."""
    if isinstance(records, (str, Path)):
        text = Path(records).read_text(encoding="utf-8")
        records = (json.loads(text) if text.lstrip().startswith("[")
                   else [json.loads(line) for line in text.splitlines() if line.strip()])
    return [import_swebench_record(r, repos, **kwargs) for r in records]
