"""A disk budget for an episode's workspace, held while the agent's commands run.

The workspace is a directory on the host's disk that the agent's commands write into. Each
file is capped by RLIMIT_FSIZE, but not their number: one `bash` call could fill the disk in
seconds. `DiskWatch` measures the workspace every `interval` seconds while a command runs —
allocated blocks, so a sparse file counts for what it really takes — and calls `on_exceed`
(which kills the command) the moment it holds more than `max_bytes` or more than
`max_entries` files and directories (inodes). What can be written past the budget is what a
command writes in one interval.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self

MAX_ENTRIES = 200_000


def walk_entries(root: Path) -> Iterator[tuple[os.DirEntry, int]]:
    """Every entry under `root` with its depth (1 for root's own), without recursion (a tree
    nested past Python's recursion limit is walked too) and without following links; what is
    removed or made unreadable while we walk is skipped."""
    todo = [(str(root), 1)]
    while todo:
        path, depth = todo.pop()
        try:
            scan = os.scandir(path)
        except OSError:
            continue
        with scan:
            for entry in scan:
                yield entry, depth
                if entry.is_dir(follow_symlinks=False):
                    todo.append((entry.path, depth + 1))


def workspace_usage(root: Path, stop_bytes: int, stop_entries: int = MAX_ENTRIES
                    ) -> tuple[int, int]:
    """(bytes allocated, entries) under `root`, links not followed; the walk stops as soon as
    either passes its stop value (so a hostile tree costs at most `stop_entries` stats)."""
    used = entries = 0
    for entry, _ in walk_entries(root):
        entries += 1
        try:
            used += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
        if used > stop_bytes or entries > stop_entries:
            break
    return used, entries


class DiskWatch:
    """Context manager: watch `root` in a thread; `exceeded` says whether the budget broke
    (and `on_exceed` was called, once)."""

    def __init__(self, root: Path, max_bytes: int, on_exceed: Callable[[], object], *,
                 interval: float = 0.25, max_entries: int = MAX_ENTRIES):
        if max_bytes <= 0 or interval <= 0:
            raise ValueError(f"a disk budget needs max_bytes > 0 and interval > 0, got "
                             f"{max_bytes!r} and {interval!r}")
        self.root, self.max_bytes, self.max_entries = root, max_bytes, max_entries
        self.on_exceed, self.interval = on_exceed, interval
        self.exceeded = False
        self.usage: tuple[int, int] = (0, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="rlvr-disk-watch", daemon=True)

    def over(self) -> bool:
        self.usage = workspace_usage(self.root, self.max_bytes, self.max_entries)
        return self.usage[0] > self.max_bytes or self.usage[1] > self.max_entries

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            if self.over():
                self.exceeded = True
                self.on_exceed()
                return

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if not self.exceeded and self.over():  # written in the command's last interval
            self.exceeded = True
            self.on_exceed()
