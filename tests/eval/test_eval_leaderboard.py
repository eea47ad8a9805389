"""The leaderboard: Markdown, and the static HTML page checked in a real headless Chromium
(no console errors, nothing fetched, the expected rows, sorting, and the plots)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import gymnasium as gym
import pytest

from eval_helpers import SeededPolicy, ToolReader, ToyToolEnv, math_suite
from rlvr_envs import registry
from rlvr_envs.agents.scripted import GoldPolicy, NullPolicy
from rlvr_envs.eval.leaderboard import collect, to_markdown
from rlvr_envs.eval.publish import write_leaderboard
from rlvr_envs.eval.runner import EvalStopped, evaluate
from rlvr_envs.eval.store import ResultStore, StoreError
from rlvr_envs.eval.suites import parse_suite

TOY = "rlvr-test/ToyToolsBoard-v0"
RUNS = ["board--gold", "board--seeded", "board--tool-reader", "board--null"]  # expected rank


def _browser_or_skip() -> str:
    path = os.environ.get("RLVR_CHROMIUM") or shutil.which("chromium") or shutil.which(
        "chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (apt-get install -y chromium)")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    return path


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A result store with four complete runs on a math + multi-turn toy suite, one partial
    run on another suite, and the leaderboard written from it."""
    registry.register_env(TOY, lambda: ToyToolEnv(), "toy multi-turn env", family="toy")
    try:
        runs = tmp_path_factory.mktemp("board")
        entries = math_suite()["entries"] + [{"env": TOY, "name": "toy",
                                              "tasks": ["box/0", "box/1", "box/2"]}]
        suite = parse_suite(math_suite(name="board", entries=entries,
                                       description="math and a toy tool env"))
        for policy in (GoldPolicy(), NullPolicy(), SeededPolicy(sleep=0), ToolReader()):
            evaluate(policy, suite, runs_dir=runs)

        class DiesAfterOne(SeededPolicy):
            def generate(self, batch, params, **kw):
                if self.calls:
                    raise ConnectionError("down")
                return super().generate(batch, params, **kw)

        with pytest.raises(EvalStopped):
            evaluate(DiesAfterOne(sleep=0), parse_suite(math_suite(name="other")),
                     runs_dir=runs, retries=0)
        md, html, boards = write_leaderboard(runs)
        yield runs, md, html, boards
    finally:
        registry._CATALOGUE.pop(TOY, None)
        gym.envs.registry.pop(TOY, None)


def test_boards_rank_runs_by_pass_at_1(board):
    _, _, _, boards = board
    assert [b.suite for b in boards] == ["board", "other"]
    main = boards[0]
    assert [r.run_id for r in main.rows] == RUNS
    assert main.families == ["math", "toy"] and main.ks == [1, 2, 3]
    reader = main.rows[2]
    assert reader.pass_at(1, "toy") == 1.0 and reader.pass_at(1, "math") == 0.0
    assert boards[1].rows[0].status == "failed" and boards[1].rows[0].summary["episodes"] == 9


def test_markdown_table(board):
    _, md, _, _ = board
    text = md.read_text()
    assert "## Suite `board`" in text and "## Suite `other`" in text
    header = next(line for line in text.splitlines() if line.startswith("| rank"))
    assert ("| rank | policy | run | pass@1 | pass@2 | pass@3 | mean reward | math pass@1 | "
            "math pass@3 | toy pass@1 | toy pass@3 | mean tokens | mean chars | wall time | "
            "monitor flags | episodes | status |") == header
    gold_row = next(line for line in text.splitlines() if "board--gold" in line)
    assert gold_row.startswith("| 1 | gold | board--gold | 1.000 | 1.000 | 1.000 | 1.000 |")
    assert "| failed |" in text
    assert to_markdown([]).startswith("# Leaderboard\n\nNo runs")


def test_page_is_self_contained(board):
    _, _, html, _ = board
    page = html.read_text()
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # the SVG namespace is a name, not a fetch


@pytest.mark.slow
def test_page_in_headless_chromium(board, tmp_path):
    chromium = _browser_or_skip()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the dev extra's playwright is required in CI")
        pytest.skip("playwright is not installed (pip install playwright; no browser download "
                    "needed: Debian's chromium is used)")
    _, _, html, _ = board
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=10_000)

            rows = page.locator("#table-board tbody tr")
            assert [r.get_attribute("data-run") for r in rows.all()] == RUNS
            assert page.locator("#table-other tbody tr").count() == 1
            assert "failed" in page.locator("#table-other tbody tr").inner_text()
            first_cells = rows.first.locator("td").all_inner_texts()
            assert first_cells[:4] == ["1", "gold", "board--gold", "1.000"]

            header = page.locator("#table-board th", has_text="mean chars")
            header.click()
            assert header.get_attribute("aria-sort") == "descending"
            chars = [float(v) for v in page.locator("#table-board tbody tr td:nth-child(13)")
                     .all_inner_texts()]
            assert chars == sorted(chars, reverse=True) and len(chars) == 4
            header.click()
            chars = [float(v) for v in page.locator("#table-board tbody tr td:nth-child(13)")
                     .all_inner_texts()]
            assert chars == sorted(chars)
            page.locator("#table-board th", has_text="policy").click()
            assert page.locator("#table-board tbody tr").first.get_attribute("data-run") \
                == "board--tool-reader"  # text sort, descending first

            for family in ("math", "toy"):
                passk = page.locator(f"#passk-board-{family}")
                assert passk.is_visible()
                assert passk.locator("circle.point").count() == 4 * 3  # 4 runs × k=1..3
                difficulty = page.locator(f"#difficulty-board-{family}")
                assert difficulty.is_visible() and difficulty.locator("circle.point").count() >= 4
            for family in ("math", "toy"):
                lengths = page.locator(f"#lengths-board-{family}")
                assert lengths.is_visible() and lengths.locator("rect.bar").count() >= 4
                assert lengths.locator("text.row-label").all_text_contents() == RUNS
            box = page.locator("#passk-board-math").bounding_box()
            assert box["width"] > 200 and box["height"] > 150
            shot = tmp_path / "leaderboard.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            if os.environ.get("RLVR_SCREENSHOT_DIR"):
                shutil.copy(shot, os.environ["RLVR_SCREENSHOT_DIR"])
        finally:
            browser.close()
    assert problems == []
    assert requests and all(u.startswith("file://") for u in requests), requests


@pytest.mark.slow
def test_page_dom_after_scripts_in_plain_chromium(board):
    """Without Playwright: chromium --dump-dom prints the DOM after the page's script ran."""
    chromium = _browser_or_skip()
    _, _, html, _ = board
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--dump-dom", html.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    assert 'data-ready="1"' in dom  # the script ran to its last line without an exception
    assert all(f'data-run="{run}"' in dom for run in RUNS)
    # math and toy for 'board', math for 'other': one pass@k and one length chart each
    assert dom.count('class="chart passk"') == 3 and dom.count('class="chart lengths"') == 3


def test_empty_store_gives_an_empty_page_and_a_missing_one_an_error(tmp_path):
    with pytest.raises(StoreError, match="no result store"):
        write_leaderboard(tmp_path)
    assert not (tmp_path / "results.sqlite").exists()
    ResultStore(tmp_path).close()
    md, html, boards = write_leaderboard(tmp_path)
    assert boards == [] and "No runs" in md.read_text() and 'id="empty"' in html.read_text()
    with ResultStore(tmp_path) as store:
        assert collect(store) == []
