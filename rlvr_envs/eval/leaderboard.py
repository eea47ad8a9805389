"""Leaderboards from the result store: rows per run grouped by suite, as Markdown, and the
files `rlvr leaderboard` writes (`leaderboard.md` and the static `index.html`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rlvr_envs.eval.store import ResultStore
from rlvr_envs.eval.summary import summarise


@dataclass
class RunRow:
    run_id: str
    policy: str
    suite: str
    status: str
    summary: dict[str, Any]
    ks: list[int]
    #: (family, characters, tokens or None) of every episode's completion
    lengths: list[tuple[str, int, int | None]] = field(default_factory=list)

    def pass_at(self, k: int, family: str | None = None) -> float | None:
        scope = self.summary if family is None else self.summary["by_family"].get(family, {})
        return (scope.get("pass_at_k") or {}).get(str(k))


@dataclass
class SuiteBoard:
    suite: str
    description: str
    ks: list[int]
    families: list[str]
    rows: list[RunRow]

    def length_unit(self, family: str) -> str:
        """Tokens when every episode of the family in every run has a token count, else
        characters (so all runs are measured alike)."""
        counts = [t for r in self.rows for f, _, t in r.lengths if f == family]
        return "tokens" if counts and None not in counts else "characters"

    def lengths(self, row: RunRow, family: str) -> list[int]:
        tokens = self.length_unit(family) == "tokens"
        return [int(t if tokens else c) for f, c, t in row.lengths if f == family]  # type: ignore[arg-type]

    def family_ks(self, family: str) -> list[int]:
        """The k shown per family: 1 and the largest k every run has for the family."""
        ks = sorted({int(k) for r in self.rows
                     for k in (r.summary["by_family"].get(family, {}).get("pass_at_k") or {})})
        return sorted({1, ks[-1]}) if ks else [1]


def _sort_key(row: RunRow) -> tuple:
    p1 = row.pass_at(1)
    return (-(p1 if p1 is not None else -1), -(row.summary.get("mean_reward") or 0), row.run_id)


def collect(store: ResultStore, suite: str | None = None) -> list[SuiteBoard]:
    """One board per suite, runs ranked by pass@1 then mean reward; runs without episodes skipped."""
    boards: dict[str, SuiteBoard] = {}
    for record in store.list_runs(suite):
        episodes = store.episodes(record.run_id)
        if not episodes:
            continue
        summary = store.get_summary(record.run_id) if record.status == "complete" else None
        if summary is None:
            summary = summarise(episodes)
            summary["wall_seconds"] = record.wall_seconds
        ks = [int(k) for k in record.config.get("k", [1])]
        row = RunRow(record.run_id, record.policy, record.suite, record.status, summary, ks,
                     [(ep.family, ep.num_chars, ep.num_tokens) for ep in episodes])
        definition = record.config.get("suite_definition", {})
        board = boards.setdefault(record.suite, SuiteBoard(
            record.suite, str(definition.get("description", "")), ks, [], []))
        board.ks = sorted(set(board.ks) | set(ks))
        board.rows.append(row)
    for board in boards.values():
        board.rows.sort(key=_sort_key)
        board.families = sorted({f for r in board.rows for f in r.summary.get("by_family", {})})
    return [boards[name] for name in sorted(boards)]


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    minutes, secs = divmod(float(seconds), 60)
    return f"{int(minutes)}m{secs:04.1f}s" if minutes else f"{secs:.1f}s"


def overall_ks(board: SuiteBoard) -> list[int]:
    """The suite's k that some run has over all its tasks (a k above some entry's n is not)."""
    return [k for k in board.ks if any(r.pass_at(k) is not None for r in board.rows)] or [1]


def columns(board: SuiteBoard) -> list[tuple[str, str]]:
    """(header, kind) of the leaderboard columns; kind is "text" or "num"."""
    cols = [("rank", "num"), ("policy", "text"), ("run", "text")]
    cols += [(f"pass@{k}", "num") for k in overall_ks(board)]
    cols += [("mean reward", "num")]
    cols += [(f"{family} pass@{k}", "num") for family in board.families
             for k in board.family_ks(family)]
    cols += [("mean tokens", "num"), ("mean chars", "num"), ("wall time", "num"),
             ("monitor flags", "num"), ("episodes", "num"), ("status", "text")]
    return cols


def cells(board: SuiteBoard, rank: int, row: RunRow) -> list[tuple[str, Any]]:
    """(display text, sort value) per column, in `columns` order."""
    s = row.summary
    out: list[tuple[str, Any]] = [(str(rank), rank), (row.policy, row.policy),
                                  (row.run_id, row.run_id)]
    for k in overall_ks(board):
        v = row.pass_at(k)
        out.append((fmt(v), v))
    out.append((fmt(s.get("mean_reward")), s.get("mean_reward")))
    for family in board.families:
        for k in board.family_ks(family):
            v = row.pass_at(k, family)
            out.append((fmt(v), v))
    tokens = (s.get("completion_tokens") or {}).get("mean")
    chars = (s.get("completion_chars") or {}).get("mean")
    out += [(fmt(tokens, 1), tokens), (fmt(chars, 1), chars),
            (fmt_seconds(s.get("wall_seconds")), s.get("wall_seconds")),
            (str(s.get("monitor_flags", 0)), s.get("monitor_flags", 0)),
            (str(s.get("episodes", 0)), s.get("episodes", 0)), (row.status, row.status)]
    return out


def to_markdown(boards: list[SuiteBoard]) -> str:
    if not boards:
        return "# Leaderboard\n\nNo runs with episodes in the result store yet.\n"
    lines = ["# Leaderboard", ""]
    for board in boards:
        lines.append(f"## Suite `{board.suite}`")
        if board.description:
            lines += ["", board.description]
        lines.append("")
        headers = [h for h, _ in columns(board)]
        lines.append("| " + " | ".join(headers) + " |")
        lines.append("|" + "|".join("---:" if kind == "num" else "---"
                                    for _, kind in columns(board)) + "|")
        for rank, row in enumerate(board.rows, 1):
            texts = [t.replace("|", "\\|") for t, _ in cells(board, rank, row)]
            lines.append("| " + " | ".join(texts) + " |")
        lines.append("")
    lines.append("pass@k: the unbiased estimator of Chen et al. (2021), averaged over tasks. "
                 "Monitor flags: flags raised by the hacking monitors (`info[\"hacking\"]`, "
                 "`info[\"monitors\"]`), summed over episodes.")
    return "\n".join(lines) + "\n"

