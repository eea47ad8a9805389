"""Rich progress bars for an evaluation: one bar for the run, one per suite entry, each with
its running accuracy."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)


class EvalProgress:
    """Called by the runner after every stored unit with the unit's episodes."""

    def __init__(self, evaluation: Any, done_keys: set, *, console: Console | None = None,
                 title: str = "eval"):
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
                                 TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=console, transient=False)
        self.correct: dict[int, int] = {}
        self.seen: dict[int, int] = {}
        expected = evaluation.expected_keys()
        self.total = self.progress.add_task(title, total=len(expected),
                                            completed=len(done_keys & expected), stats="")
        self.bars = []
        for i, (entry, params) in enumerate(zip(evaluation.resolved.entries, evaluation.params)):
            keys = {(entry.entry.name, t.id, s) for t in entry.tasks for s in range(params.n)}
            self.correct[i], self.seen[i] = 0, 0
            self.bars.append(self.progress.add_task(f"  {entry.entry.name}", total=len(keys),
                                                    completed=len(done_keys & keys), stats=""))
        self.progress.start()

    def __call__(self, entry_index: int, episodes: list) -> None:
        self.correct[entry_index] += sum(ep.correct for ep in episodes)
        self.seen[entry_index] += len(episodes)
        accuracy = self.correct[entry_index] / max(1, self.seen[entry_index])
        self.progress.update(self.bars[entry_index], advance=len(episodes),
                             stats=f"acc {accuracy:.2f}")
        all_seen = sum(self.seen.values())
        self.progress.update(self.total, advance=len(episodes),
                             stats=f"acc {sum(self.correct.values()) / max(1, all_seen):.2f}")

    def close(self) -> None:
        self.progress.stop()
