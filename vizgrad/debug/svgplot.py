"""Tiny hand-written SVG charts (no plotting library): bars on a log scale, lines.

Every piece of text is XML-escaped; the output is a complete, standalone SVG file.

Example
-------
>>> svg = bar_chart([("fc1.weight", 1e-3, 2e-2), ("fc2.weight", None, None)])
>>> svg.startswith("<svg")
True
"""

from __future__ import annotations

import math
from functools import partial
from html import escape as _html_escape

# xml.sax.saxutils.escape's result (&, <, > only) without importing xml.sax, which
# imports urllib.request and with it http, ssl and email: 7 MiB of every vizgrad process.
escape = partial(_html_escape, quote=False)

COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756")
MISSING = "#d62728"


def _attr(text: str) -> str:
    return escape(str(text)).replace('"', "&quot;")


def _log_range(values: list[float]) -> tuple[float, float]:
    positive = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not positive:
        return -1.0, 0.0
    low, high = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
    return float(low), float(high if high > low else low + 1)


def bar_chart(bars: list[tuple], title: str = "",
              series: tuple[str, ...] = ("value",)) -> str:
    """Grouped bars on a log10 y axis: ``bars`` are ``(label, value, value, ...)``.

    A ``None`` value (no gradient) is drawn as a red cross at the bottom; zero and
    non-finite values as a red mark too, named in the tooltip.
    """
    count = len(bars)
    groups = max(count, 1)
    per = len(series)
    values = [v for bar in bars for v in bar[1:]]
    low, high = _log_range(values)
    left, top, plot_h, bottom = 70, 40, 260, 150
    group_w = max(18, min(60, 700 // groups))
    width = left + groups * group_w + 160
    height = top + plot_h + bottom

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (math.log10(value) - low) / (high - low))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="20" font-size="14">{escape(title)}</text>']
    for power in range(int(low), int(high) + 1):
        y = y_of(10.0 ** power)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + groups * group_w}" '
                     f'y2="{y:.1f}" stroke="#dddddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">1e{power}</text>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" '
                 'stroke="black"/>')
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + groups * group_w}" '
                 f'y2="{top + plot_h}" stroke="black"/>')
    bar_w = max(3, (group_w - 6) // per)
    for index, bar in enumerate(bars):
        label, *heights = bar
        x0 = left + index * group_w + 3
        for k, value in enumerate(heights):
            x = x0 + k * bar_w
            name = f"{label} {series[k] if k < len(series) else ''}: {value}"
            if value is None or not math.isfinite(value) or value <= 0:
                y = top + plot_h - 6
                parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{y:.1f}" fill="{MISSING}" '
                             f'text-anchor="middle" font-weight="bold">'
                             f'<title>{escape(name)}</title>x</text>')
                continue
            y = max(top, y_of(value))
            parts.append(f'<rect x="{x}" y="{y:.1f}" width="{bar_w - 1}" '
                         f'height="{top + plot_h - y:.1f}" fill="{COLOURS[k % len(COLOURS)]}">'
                         f'<title>{escape(name)}</title></rect>')
        cx = x0 + (group_w - 6) / 2
        ty = top + plot_h + 8
        parts.append(f'<text x="{cx:.1f}" y="{ty}" transform="rotate(45 {cx:.1f} {ty})">'
                     f'{escape(str(label))}</text>')
    legend_x = left + groups * group_w + 20
    for k, name in enumerate(series):
        y = top + 10 + 18 * k
        parts.append(f'<rect x="{legend_x}" y="{y - 9}" width="12" height="10" '
                     f'fill="{COLOURS[k % len(COLOURS)]}"/>')
        parts.append(f'<text x="{legend_x + 16}" y="{y}">{escape(name)}</text>')
    y = top + 10 + 18 * len(series)
    parts.append(f'<text x="{legend_x}" y="{y}" fill="{MISSING}">x = no gradient / 0</text>')
    parts.append(f'<text x="{left}" y="{height - 8}" fill="#555555">'
                 f'{_attr("bars by depth (input side first), log scale")}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
