"""The on-disk journal that makes `rlvr tasks build-repo` resumable.

Per package version, under the output directory:

- ``tasks/PACKAGE.jsonl``: every verified task, appended as soon as it is kept;
- ``progress/PACKAGE-VERSION.jsonl``: every mutant already tried and rejected (and why);
- ``progress/PACKAGE-VERSION.pristine.json``: the pristine suite run (two runs, flaky tests
  dropped), so a restarted build does not run it again.

A build interrupted at any point and started again keeps what it verified and goes on with
the mutants it has not tried yet.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rlvr_envs.tasks.repo.builder import SuiteRun
from rlvr_envs.tasks.repo.records import read_tasks

from rlvr_envs.core.task import Task


class BuildJournal:
    def __init__(self, out_dir: Path, package: str, version: str):
        self.package, self.version = package, version
        self.tasks_file = out_dir / "tasks" / f"{package}.jsonl"
        self.rejects_file = out_dir / "progress" / f"{package}-{version}.jsonl"
        self.pristine_file = out_dir / "progress" / f"{package}-{version}.pristine.json"
        self._kept = [t for t in (read_tasks(self.tasks_file) if self.tasks_file.is_file()
                                  else []) if t.metadata.get("version") == version]
        self._done = {t.source_id for t in self._kept}
        if self.rejects_file.is_file():
            for line in self.rejects_file.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    self._done.add(json.loads(line)["source_id"])

    def kept_tasks(self) -> list[Task]:
        return list(self._kept)

    def tried(self, source_id: str) -> bool:
        return source_id in self._done

    def keep(self, task: Task) -> None:
        self._append(self.tasks_file, task.to_dict())
        self._kept.append(task)
        self._done.add(task.source_id)

    def reject(self, source_id: str, reason: str) -> None:
        self._append(self.rejects_file, {"source_id": source_id, "reason": reason[:300]})
        self._done.add(source_id)

    def pristine_run(self) -> SuiteRun | None:
        if not self.pristine_file.is_file():
            return None
        data = json.loads(self.pristine_file.read_text(encoding="utf-8"))
        return SuiteRun(data["outcomes"], data["messages"], data["exit_code"], False)

    def save_pristine_run(self, run: SuiteRun) -> None:
        self.pristine_file.parent.mkdir(parents=True, exist_ok=True)
        self.pristine_file.write_text(json.dumps(
            {"outcomes": run.outcomes, "messages": run.messages, "exit_code": run.exit_code},
            sort_keys=True), encoding="utf-8")

    @staticmethod
    def _append(path: Path, record: dict) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
