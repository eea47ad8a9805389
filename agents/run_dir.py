"""A training run's folder: settings, a JSONL log, checkpoints, the final model, eval figures.

Layout: `settings.json`, `log.jsonl` (one line per logged step), `checkpoint-<step>/`,
`final/` (the trained model and tokenizer), `eval.json` (held-out scores before and after).
On resume the log is cut back to the checkpoint's step, so no step appears twice.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    @property
    def log_path(self) -> Path:
        return self.path / "log.jsonl"

    @property
    def final_path(self) -> Path:
        return self.path / "final"

    def write_settings(self, settings: Any) -> None:
        data = asdict(settings) if is_dataclass(settings) else dict(settings)
        (self.path / "settings.json").write_text(json.dumps(data, indent=2, default=str))

    def checkpoints(self) -> list[tuple[int, Path]]:
        found = []
        for child in self.path.iterdir():
            match = CHECKPOINT.match(child.name)
            if match and child.is_dir():
                found.append((int(match.group(1)), child))
        return sorted(found)

    def last_checkpoint(self) -> tuple[int, Path] | None:
        checkpoints = self.checkpoints()
        return checkpoints[-1] if checkpoints else None

    def log(self, record: dict[str, Any]) -> None:
        with self.log_path.open("a") as fh:
            fh.write(json.dumps(record, default=float) + "\n")

    def read_log(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]

    def truncate_log(self, step: int) -> None:
        """Drop log lines after `step` (work an interrupted run did past its checkpoint)."""
        kept = [r for r in self.read_log() if int(r.get("step", 0)) <= step]
        self.log_path.write_text("".join(json.dumps(r) + "\n" for r in kept))

    def write_eval(self, figures: dict[str, Any]) -> None:
        path = self.path / "eval.json"
        existing = json.loads(path.read_text()) if path.exists() else {}
        existing.update(figures)
        path.write_text(json.dumps(existing, indent=2))

    def read_eval(self) -> dict[str, Any]:
        path = self.path / "eval.json"
        return json.loads(path.read_text()) if path.exists() else {}
