"""The durable result store: runs, episodes and summaries in one SQLite file (WAL mode).

Layout (`<runs_dir>/results.sqlite`):

- `runs`: one row per run — policy, suite, the full run configuration (sampling parameters,
  suite definition, resolved task ids, seed, batch size), package version, status
  (`running`, `interrupted`, `failed`, `complete`), accumulated wall time, sessions, last error.
- `episodes`: one row per (run, env, task id, sample index) — the primary key — with the
  completion, reward, verdict, breakdown, monitor flags, token and character counts, timings.
- `summaries`: the metrics of a run (JSON), written when it completes.

Episodes are written one work unit (a batch of prompts with all their samples) per
transaction, so a run killed at any instant (Ctrl-C, `kill -9`) holds only whole units, and a
resumed run fills in exactly the missing ones. Plain stdlib `sqlite3`.

A file that is there but is not a readable store (truncated to 0 bytes, another file type,
damaged pages) raises `StoreError` naming it; the store never replaces or rewrites such a file
(SQLite would otherwise take an empty file for a new database and start over silently).
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

DB_FILENAME = "results.sqlite"
SCHEMA_VERSION = 1
SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(ValueError):
    """The result store file cannot be used as it is (missing, empty, damaged, newer)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    policy TEXT NOT NULL,
    suite TEXT NOT NULL,
    config TEXT NOT NULL,
    package_version TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    wall_seconds REAL NOT NULL DEFAULT 0,
    sessions INTEGER NOT NULL DEFAULT 1,
    error TEXT
);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    env TEXT NOT NULL,
    task_id TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    env_id TEXT NOT NULL,
    family TEXT NOT NULL,
    source_id TEXT,
    level INTEGER NOT NULL,
    completion TEXT NOT NULL,
    reward REAL NOT NULL,
    correct INTEGER NOT NULL,
    verifier TEXT,
    breakdown TEXT NOT NULL,
    monitors TEXT NOT NULL,
    num_tokens INTEGER,
    num_chars INTEGER NOT NULL,
    finish_reason TEXT,
    turns INTEGER NOT NULL DEFAULT 1,
    generate_seconds REAL NOT NULL,
    score_seconds REAL NOT NULL,
    info TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run_id, env, task_id, sample_index)
);
CREATE TABLE IF NOT EXISTS summaries (
    run_id TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
    summary TEXT NOT NULL,
    computed_at REAL NOT NULL
);
"""

EPISODE_COLUMNS = ("run_id", "env", "task_id", "sample_index", "env_id", "family", "source_id",
                   "level", "completion", "reward", "correct", "verifier", "breakdown", "monitors",
                   "num_tokens", "num_chars", "finish_reason", "turns", "generate_seconds",
                   "score_seconds", "info", "created_at")
_JSON_COLUMNS = ("breakdown", "monitors", "info")


@dataclass
class Episode:
    """One scored sample, as stored."""

    env: str
    task_id: str
    sample_index: int
    env_id: str
    family: str
    source_id: str | None
    level: int
    completion: str
    reward: float
    correct: bool
    verifier: str | None
    breakdown: dict[str, float] = field(default_factory=dict)
    monitors: dict[str, bool] = field(default_factory=dict)
    num_tokens: int | None = None
    num_chars: int = 0
    finish_reason: str | None = None
    turns: int = 1
    generate_seconds: float = 0.0
    score_seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""
    created_at: float = 0.0

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.env, self.task_id, self.sample_index)


@dataclass
class RunRecord:
    run_id: str
    policy: str
    suite: str
    config: dict[str, Any]
    package_version: str
    status: str
    created_at: float
    updated_at: float
    wall_seconds: float
    sessions: int
    error: str | None


def _check_store_file(path: Path, create: bool) -> bool:
    """Whether a store file exists; StoreError when it cannot be one (SQLite would treat an
    empty file as a fresh database, and this is where that is refused)."""
    if not path.exists():
        if not create:
            raise StoreError(f"no result store at {path}; run `rlvr eval` first or pass "
                             f"--runs-dir")
        return False
    if not path.is_file():
        raise StoreError(f"{path} is not a file; pass another --runs-dir")
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if not header:
        raise StoreError(f"{path} is empty (0 bytes): a truncated result store, not a new one; "
                         f"it was left as it is: restore it from a copy or move it away to "
                         f"start a new store")
    if header != SQLITE_HEADER:
        raise StoreError(f"{path} is not an SQLite result store (it starts with {header!r}); "
                         f"it was left as it is: move it away or pass another --runs-dir")
    return True


class ResultStore:
    """One SQLite file of runs; safe to open from several processes (WAL, busy timeout)."""

    def __init__(self, runs_dir: str | Path, *, create: bool = True):
        """Open (or, with `create`, start) the store in `runs_dir`; StoreError for a file that
        is missing (`create=False`), empty, not SQLite, damaged, or of another schema."""
        self.runs_dir = Path(runs_dir)
        self.path = self.runs_dir / DB_FILENAME
        existed = _check_store_file(self.path, create)
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as err:
            raise StoreError(f"{self.path}: cannot open the result store: {err}") from None
        try:
            self._open(existed)
        except sqlite3.DatabaseError as err:
            self._conn.close()
            raise StoreError(f"{self.path}: the result store is damaged ({err}); it was left "
                             f"as it is: restore it from a copy or move it away to start a "
                             f"new store") from None
        except BaseException:
            self._conn.close()
            raise

    def _open(self, existed: bool) -> None:
        self._conn.row_factory = sqlite3.Row
        if existed:  # read before writing anything: a damaged file fails here, untouched
            self._conn.execute("PRAGMA quick_check(1)").fetchone()
            tables = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            if "runs" not in tables or "meta" not in tables:
                raise StoreError(f"{self.path} is an SQLite file but not an rlvr result store "
                                 f"(tables: {sorted(tables)}); pass another --runs-dir")
        mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise RuntimeError(f"{self.path}: could not switch SQLite to WAL mode (got {mode!r})")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        with self.transaction():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._conn.execute(statement)
            row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._conn.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                                   (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise StoreError(f"{self.path}: result store schema version {row[0]}, this "
                                 f"rlvr-envs reads version {SCHEMA_VERSION}")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception (KeyboardInterrupt included)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- runs ------------------------------------------------------------------------------------

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        if row is None:
            return None
        data = dict(row)
        data["config"] = json.loads(data["config"])
        return RunRecord(**data)

    def list_runs(self, suite: str | None = None) -> list[RunRecord]:
        query, args = "SELECT run_id FROM runs", ()
        if suite is not None:
            query, args = query + " WHERE suite=?", (suite,)
        ids = [r[0] for r in self._conn.execute(query + " ORDER BY created_at, run_id", args)]
        return [self.get_run(i) for i in ids]  # type: ignore[misc]

    def create_run(self, run_id: str, *, policy: str, suite: str, config: dict[str, Any],
                   package_version: str) -> RunRecord:
        now = time.time()
        with self.transaction() as conn:
            conn.execute("INSERT INTO runs (run_id, policy, suite, config, package_version, status,"
                         " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'running', ?, ?)",
                         (run_id, policy, suite, json.dumps(config, sort_keys=True),
                          package_version, now, now))
        return self.get_run(run_id)  # type: ignore[return-value]

    def delete_run(self, run_id: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM episodes WHERE run_id=?", (run_id,))
            conn.execute("DELETE FROM summaries WHERE run_id=?", (run_id,))
            conn.execute("DELETE FROM runs WHERE run_id=?", (run_id,))

    def start_session(self, run_id: str) -> None:
        """A resumed run: back to `running`, one more session."""
        with self.transaction() as conn:
            conn.execute("UPDATE runs SET status='running', error=NULL, sessions=sessions+1, "
                         "updated_at=? WHERE run_id=?", (time.time(), run_id))

    def set_status(self, run_id: str, status: str, error: str | None = None) -> None:
        with self.transaction() as conn:
            conn.execute("UPDATE runs SET status=?, error=?, updated_at=? WHERE run_id=?",
                         (status, error, time.time(), run_id))

    # -- episodes --------------------------------------------------------------------------------

    def add_episodes(self, run_id: str, episodes: Iterable[Episode], *,
                     wall_seconds: float = 0.0) -> int:
        """Write one unit of work atomically, adding its wall time to the run's."""
        now = time.time()
        rows = []
        for ep in episodes:
            values = {**ep.__dict__, "run_id": run_id, "created_at": now,
                      "correct": int(bool(ep.correct))}
            for name in _JSON_COLUMNS:
                values[name] = json.dumps(values[name], sort_keys=True, default=str)
            rows.append(tuple(values[c] for c in EPISODE_COLUMNS))
        placeholders = ", ".join("?" for _ in EPISODE_COLUMNS)
        with self.transaction() as conn:
            conn.executemany(f"INSERT INTO episodes ({', '.join(EPISODE_COLUMNS)}) "
                             f"VALUES ({placeholders})", rows)
            conn.execute("UPDATE runs SET wall_seconds=wall_seconds+?, updated_at=? WHERE run_id=?",
                         (wall_seconds, now, run_id))
        return len(rows)

    def episode_keys(self, run_id: str) -> set[tuple[str, str, int]]:
        return {(r[0], r[1], r[2]) for r in self._conn.execute(
            "SELECT env, task_id, sample_index FROM episodes WHERE run_id=?", (run_id,))}

    def count_episodes(self, run_id: str) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM episodes WHERE run_id=?",
                                  (run_id,)).fetchone()[0]

    def episodes(self, run_id: str) -> list[Episode]:
        out = []
        for row in self._conn.execute("SELECT * FROM episodes WHERE run_id=? ORDER BY env, "
                                      "task_id, sample_index", (run_id,)):
            data = dict(row)
            for name in _JSON_COLUMNS:
                data[name] = json.loads(data[name])
            data["correct"] = bool(data["correct"])
            out.append(Episode(**data))
        return out

    # -- summaries -------------------------------------------------------------------------------

    def save_summary(self, run_id: str, summary: dict[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?)",
                         (run_id, json.dumps(summary, sort_keys=True), time.time()))

    def get_summary(self, run_id: str) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT summary FROM summaries WHERE run_id=?",
                                 (run_id,)).fetchone()
        return None if row is None else json.loads(row[0])
