"""The static leaderboard page: one self-contained HTML file (inline CSS, JS and SVG; nothing
is fetched) with a sortable table per suite, pass@k per family, accuracy by difficulty level
per policy, and completion-length distributions."""

from __future__ import annotations

import datetime as _dt
from html import escape

from rlvr_envs.eval.charts import PALETTE, Series, histograms, line_chart
from rlvr_envs.eval.leaderboard import SuiteBoard, cells, columns

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;
     max-width:1200px}
h1{margin-bottom:4px} .meta{color:#666;font-size:13px}
.table-wrap{overflow-x:auto}
table.leaderboard{border-collapse:collapse;font-size:13px;margin:12px 0}
table.leaderboard th,table.leaderboard td{border-bottom:1px solid #ddd;padding:4px 8px;
     text-align:right;white-space:nowrap}
table.leaderboard th.text,table.leaderboard td.text{text-align:left}
table.leaderboard th{cursor:pointer;user-select:none;background:#f4f4f4;position:sticky;top:0}
table.leaderboard th[aria-sort=ascending]::after{content:" \\25B2"}
table.leaderboard th[aria-sort=descending]::after{content:" \\25BC"}
table.leaderboard tbody tr:hover{background:#f0f6ff}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #e4e4e4;border-radius:4px}
svg .chart-title{font-size:13px;font-weight:600} svg .tick{font-size:10px;fill:#555}
svg .axis-title{font-size:11px;fill:#333} svg .row-label{font-size:11px;fill:#222}
svg .grid{stroke:#eee}
.legend{font-size:12px;margin:6px 0} .legend span{margin-right:14px}
"""

_JS = """
(function () {
  function value(cell, kind) {
    var raw = cell.getAttribute('data-value');
    if (kind === 'num') { var v = parseFloat(raw); return isNaN(v) ? -Infinity : v; }
    return (raw || '').toLowerCase();
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var headers = table.querySelectorAll('thead th');
    headers.forEach(function (th, index) {
      th.addEventListener('click', function () {
        var kind = th.getAttribute('data-kind');
        var descending = th.getAttribute('aria-sort') !== 'descending';
        headers.forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = value(a.cells[index], kind), y = value(b.cells[index], kind);
          var order = x < y ? -1 : (x > y ? 1 : 0);
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  document.body.setAttribute('data-ready', '1');
})();
"""


def _table(board: SuiteBoard, colors: dict[str, str]) -> str:
    head = "".join(f'<th class="{kind}" data-kind="{kind}" scope="col">{escape(name)}</th>'
                   for name, kind in columns(board))
    body = []
    for rank, row in enumerate(board.rows, 1):
        tds = []
        for (name, kind), (text, sort_value) in zip(columns(board), cells(board, rank, row)):
            value = "" if sort_value is None else escape(str(sort_value))
            content = escape(text)
            if name == "run":
                content = (f'<span class="swatch" style="background:{colors[row.run_id]}">'
                           f'</span>{content}')
            tds.append(f'<td class="{kind}" data-value="{value}">{content}</td>')
        body.append(f'<tr data-run="{escape(row.run_id)}">{"".join(tds)}</tr>')
    return (f'<div class="table-wrap"><table class="leaderboard sortable" '
            f'id="table-{escape(board.suite)}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _legend(board: SuiteBoard, colors: dict[str, str]) -> str:
    items = "".join(f'<span><span class="swatch" style="background:{colors[r.run_id]}"></span>'
                    f'{escape(r.policy)} ({escape(r.run_id)})</span>' for r in board.rows)
    return f'<div class="legend">{items}</div>'


def _passk_charts(board: SuiteBoard, colors: dict[str, str]) -> str:
    charts = []
    for family in board.families:
        ks = sorted({int(k) for r in board.rows
                     for k in (r.summary["by_family"].get(family, {}).get("pass_at_k") or {})})
        labels = [str(k) for k in ks]
        series = [Series(r.run_id, colors[r.run_id], [(str(k), r.pass_at(k, family)) for k in ks])
                  for r in board.rows]
        charts.append(line_chart(f"passk-{board.suite}-{family}", f"{family}: pass@k", labels,
                                 series, css_class="passk", x_title="k", y_title="pass@k"))
    return "".join(charts)


def _difficulty_charts(board: SuiteBoard, colors: dict[str, str]) -> str:
    charts = []
    for family in board.families:
        levels = sorted({int(level) for r in board.rows
                         for level in r.summary.get("by_difficulty", {}).get(family, {})})
        labels = [str(level) for level in levels]
        series = []
        for r in board.rows:
            per_level = r.summary.get("by_difficulty", {}).get(family, {})
            series.append(Series(r.run_id, colors[r.run_id],
                                 [(str(level), (per_level.get(str(level)) or {}).get("accuracy"))
                                  for level in levels]))
        charts.append(line_chart(f"difficulty-{board.suite}-{family}",
                                 f"{family}: accuracy by difficulty", labels, series,
                                 css_class="difficulty", x_title="level", y_title="accuracy"))
    return "".join(charts)


def _section(board: SuiteBoard) -> str:
    colors = {r.run_id: PALETTE[i % len(PALETTE)] for i, r in enumerate(board.rows)}
    lengths = "".join(
        histograms(f"lengths-{board.suite}-{family}",
                   f"{family}: completion length ({board.length_unit(family)})",
                   [(r.run_id, colors[r.run_id], board.lengths(r, family)) for r in board.rows],
                   css_class="lengths", x_title=board.length_unit(family), width=560)
        for family in board.families)
    ks = ", ".join(str(k) for k in board.ks)
    description = f"<p>{escape(board.description)}</p>" if board.description else ""
    return (f'<section class="suite" id="suite-{escape(board.suite)}">'
            f'<h2>Suite <code>{escape(board.suite)}</code></h2>{description}'
            f'<p class="meta">{len(board.rows)} run(s); pass@k for k = {ks} (unbiased estimator '
            f'of Chen et al. 2021, averaged over tasks). Click a column header to sort.</p>'
            f'{_table(board, colors)}{_legend(board, colors)}'
            f'<h3>pass@k by family</h3><div class="charts">{_passk_charts(board, colors)}</div>'
            f'<h3>Accuracy by difficulty level</h3>'
            f'<div class="charts">{_difficulty_charts(board, colors)}</div>'
            f'<h3>Completion lengths</h3><div class="charts">{lengths}</div></section>')


def render_page(boards: list[SuiteBoard], *, source: str = "") -> str:
    """The whole page as one string."""
    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = "".join(_section(b) for b in boards) or (
        '<p id="empty">No runs with episodes in the result store yet: run '
        '<code>rlvr eval</code> first.</p>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>rlvr-envs leaderboard</title><style>{_CSS}</style></head><body>'
            f'<h1>rlvr-envs leaderboard</h1><p class="meta">Generated {generated} from '
            f'<code>{escape(source)}</code>.</p>{sections}<script>{_JS}</script></body></html>\n')
