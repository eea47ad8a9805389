"""Small inline SVG charts for the static leaderboard page: line charts (pass@k curves,
accuracy by difficulty) and histogram small multiples (completion lengths).

Plain strings, no dependencies; every mark carries a <title> so hovering shows its value.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")

DASHES = ("", "6 3", "2 2", "8 3 2 3")


@dataclass
class Series:
    label: str
    color: str
    points: list[tuple[str, float | None]]  # (x label, y) in x order; None = no value


def _frame(width: int, height: int, css_class: str, chart_id: str, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css_class}" '
            f'id="{escape(chart_id)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
            f'<text class="chart-title" x="{width / 2:.1f}" y="16" text-anchor="middle">'
            f'{escape(title)}</text>')


def line_chart(chart_id: str, title: str, x_labels: Sequence[str], series: Sequence[Series], *,
               css_class: str, x_title: str, y_title: str, width: int = 340,
               height: int = 240) -> str:
    """y in [0, 1]; one polyline with point markers per series."""
    left, right, top, bottom = 46, 12, 28, 42
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(1, len(x_labels) - 1) if len(x_labels) > 1 else 0

    def x_at(i: int) -> float:
        return left + (i * step if len(x_labels) > 1 else plot_w / 2)

    def y_at(v: float) -> float:
        return top + plot_h * (1 - v)

    parts = [_frame(width, height, css_class, chart_id, title)]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        y = y_at(tick)
        parts.append(f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" '
                     f'y2="{y:.1f}"/><text class="tick" x="{left - 6}" y="{y + 4:.1f}" '
                     f'text-anchor="end">{tick:g}</text>')
    for i, label in enumerate(x_labels):
        parts.append(f'<text class="tick" x="{x_at(i):.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle">{escape(label)}</text>')
    parts.append(f'<text class="axis-title" x="{left + plot_w / 2:.1f}" y="{height - 6}" '
                 f'text-anchor="middle">{escape(x_title)}</text>'
                 f'<text class="axis-title" transform="translate(12 {top + plot_h / 2:.1f}) '
                 f'rotate(-90)" text-anchor="middle">{escape(y_title)}</text>')
    for index, s in enumerate(series):
        # a small vertical offset per series keeps equal curves (two policies at 0) visible
        nudge = (index - (len(series) - 1) / 2) * 2.0
        coords = [(x_at(x_labels.index(x)), y_at(y) + nudge, x, y) for x, y in s.points
                  if y is not None and x in x_labels]
        if len(coords) > 1:
            path = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy, _, _ in coords)
            dash = DASHES[index % len(DASHES)]
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(f'<polyline class="series" data-series="{escape(s.label)}" '
                         f'points="{path}" fill="none" stroke="{s.color}" stroke-width="2"'
                         f'{dash_attr}/>')
        for cx, cy, x, y in coords:
            parts.append(f'<circle class="point" data-series="{escape(s.label)}" cx="{cx:.1f}" '
                         f'cy="{cy:.1f}" r="3.5" fill="{s.color}"><title>{escape(s.label)} · '
                         f'{escape(x_title)} {escape(x)}: {y:.3f}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def histograms(chart_id: str, title: str, rows: Sequence[tuple[str, str, Sequence[float]]], *,
               css_class: str, x_title: str, bins: int = 20, width: int = 700,
               row_height: int = 56) -> str:
    """One histogram per (label, color, values) row, on a shared x axis."""
    all_values = [v for _, _, values in rows for v in values]
    hi = max(all_values, default=0) or 1
    bin_w = hi / bins
    left, right, top = 170, 16, 28
    plot_w = width - left - right
    height = top + row_height * max(1, len(rows)) + 36
    parts = [_frame(width, height, css_class, chart_id, title)]
    for r, (label, color, values) in enumerate(rows):
        base = top + row_height * (r + 1) - 6
        counts = [0] * bins
        for v in values:
            counts[min(bins - 1, int(v / bin_w))] += 1
        peak = max(counts) or 1
        parts.append(f'<text class="row-label" x="{left - 8}" y="{base - row_height / 3:.1f}" '
                     f'text-anchor="end">{escape(label)}</text>'
                     f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{base}" '
                     f'y2="{base}"/>')
        for b, count in enumerate(counts):
            if not count:
                continue
            h = (row_height - 14) * count / peak
            x = left + plot_w * b / bins
            parts.append(f'<rect class="bar" data-series="{escape(label)}" x="{x:.1f}" '
                         f'y="{base - h:.1f}" width="{max(1.0, plot_w / bins - 1):.1f}" '
                         f'height="{h:.1f}" fill="{color}"><title>{escape(label)}: {count} '
                         f'completion(s) of {b * bin_w:.0f}–{(b + 1) * bin_w:.0f} '
                         f'{escape(x_title)}</title></rect>')
        if not values:
            parts.append(f'<text class="tick" x="{left + 4}" y="{base - 4}">no episodes</text>')
    axis_y = top + row_height * max(1, len(rows)) + 14
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text class="tick" x="{left + plot_w * frac:.1f}" y="{axis_y}" '
                     f'text-anchor="middle">{hi * frac:.0f}</text>')
    parts.append(f'<text class="axis-title" x="{left + plot_w / 2:.1f}" y="{axis_y + 18}" '
                 f'text-anchor="middle">{escape(x_title)}</text></svg>')
    return "".join(parts)
