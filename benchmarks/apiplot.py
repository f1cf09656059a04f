"""A grouped bar chart as hand-written SVG: requests per second by method, one bar per server.

No plotting library: the chart is a few rectangles and labels, and an SVG in
the repository renders on any Markdown viewer. The scale is logarithmic
because nginx's file serving and the API differ by an order of magnitude.
"""

from __future__ import annotations

import math
from html import escape

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#7f7f7f")
WIDTH, HEIGHT = 760, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 110


def bar_svg(series: dict[str, dict[str, float]], title: str) -> str:
    """`series`: {server: {method: req/s}}; bars grouped by method."""
    methods = list(dict.fromkeys(m for values in series.values() for m in values))
    peak = max((v for values in series.values() for v in values.values()), default=1.0)
    top_decade = 10 ** math.ceil(math.log10(max(peak, 10)))
    low = 10.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    height = TOP + plot_h + 46 + 15 * len(series)  # the legend below: one line per server

    def y(value: float) -> float:
        v = max(value, low)
        return TOP + plot_h * (1 - math.log10(v / low) / math.log10(top_decade / low))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]
    decade = low
    while decade <= top_decade:
        yy = y(decade)
        out.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#ddd"/>'
        )
        out.append(f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end">{decade:,.0f}</text>')
        decade *= 10
    group_w = plot_w / max(1, len(methods))
    bar_w = group_w * 0.8 / max(1, len(series))
    for m, method in enumerate(methods):
        x0 = LEFT + m * group_w + group_w * 0.1
        for s, values in enumerate(series.values()):
            if method not in values:
                continue
            value = values[method]
            x, yy = x0 + s * bar_w, y(value)
            out.append(
                f'<rect x="{x:.1f}" y="{yy:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{TOP + plot_h - yy:.1f}" fill="{COLOURS[s % len(COLOURS)]}">'
                f"<title>{escape(method)}: {value:,.0f} req/s</title></rect>"
            )
            out.append(
                f'<text x="{x + bar_w / 2 - 1:.1f}" y="{yy - 3:.1f}" text-anchor="middle" '
                f'font-size="9">{value:,.0f}</text>'
            )
        out.append(
            f'<text x="{x0 + group_w * 0.4:.1f}" y="{TOP + plot_h + 16}" '
            f'text-anchor="middle">{escape(method)}</text>'
        )
    out.append(
        f'<text x="14" y="{TOP + plot_h / 2}" transform="rotate(-90 14 {TOP + plot_h / 2})" '
        'text-anchor="middle">requests per second (log scale)</text>'
    )
    for s, name in enumerate(series):
        yy = TOP + plot_h + 36 + s * 15
        out.append(
            f'<rect x="{LEFT}" y="{yy - 9}" width="10" height="10" '
            f'fill="{COLOURS[s % len(COLOURS)]}"/>'
        )
        out.append(f'<text x="{LEFT + 16}" y="{yy}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
