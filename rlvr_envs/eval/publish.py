"""Writing a leaderboard to disk: the Markdown table (`leaderboard.to_markdown`) and the HTML
page (`page.render_page`) from one read of the result store."""

from __future__ import annotations

from pathlib import Path

from rlvr_envs.eval.leaderboard import SuiteBoard, collect, to_markdown
from rlvr_envs.eval.page import render_page
from rlvr_envs.eval.store import ResultStore


def write_leaderboard(runs_dir: str | Path, out_dir: str | Path | None = None,
                      suite: str | None = None) -> tuple[Path, Path, list[SuiteBoard]]:
    """Write `leaderboard.md` and `index.html` (default: `<runs_dir>/leaderboard/`)."""
    store = ResultStore(runs_dir, create=False)
    try:
        boards = collect(store, suite)
        source = store.path
    finally:
        store.close()
    out = Path(out_dir) if out_dir is not None else Path(runs_dir) / "leaderboard"
    out.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out / "leaderboard.md", out / "index.html"
    md_path.write_text(to_markdown(boards), encoding="utf-8")
    html_path.write_text(render_page(boards, source=str(source)), encoding="utf-8")
    return md_path, html_path, boards
