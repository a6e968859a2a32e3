"""Static SVG line charts for the game-day report: one chart per figure over time, the phases
shaded behind the lines. Pure: series in, SVG text out (no plotting library, no script, no
CDN; docs/operations/gameday.md says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 24, 28
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
BANDS = ("#f4f4f4", "#fde8e8", "#e8f4fd", "#eef8e8", "#fdf6e3")


def _ticks(top: float) -> list[float]:
    if top <= 0:
        return [0.0]
    step = 10 ** len(str(int(top))) / 10 if top >= 1 else 0.25
    while top / step > 5:
        step *= 2
    return [i * step for i in range(int(top / step) + 1)]


def line_chart(
    title: str,
    t: Sequence[float],
    lines: Sequence[tuple[str, Sequence[float]]],
    *,
    phases: Sequence[tuple[str, float, float]] = (),
    y_max: float | None = None,
) -> str:
    """An SVG of `lines` (label, values) against `t` (seconds)."""
    x_top = max([*t, *(end for _, _, end in phases), 1.0])
    values = [v for _, series in lines for v in series]
    top = y_max if y_max is not None else max([*values, 1.0]) * 1.1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return LEFT + plot_w * value / x_top

    def y(value: float) -> float:
        return TOP + plot_h * (1 - min(value, top) / top if top else 1)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<text x="{LEFT}" y="15" font-weight="bold">{escape(title)}</text>',
    ]
    for index, (name, start, end) in enumerate(phases):
        parts.append(
            f'<rect x="{x(start):.1f}" y="{TOP}" width="{max(0.0, x(end) - x(start)):.1f}" '
            f'height="{plot_h}" fill="{BANDS[index % len(BANDS)]}">'
            f"<title>{escape(name)}</title></rect>"
        )
        parts.append(
            f'<text x="{x(start) + 3:.1f}" y="{TOP + 11}" fill="#666">{escape(name)}</text>'
        )
    parts.extend(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
        'stroke="#ddd"/>'
        f'<text x="{LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>'
        for tick in _ticks(top)
    )
    parts.extend(
        f'<text x="{x(tick):.1f}" y="{HEIGHT - 10}" text-anchor="middle">{tick:g}s</text>'
        for tick in _ticks(x_top)
    )
    for index, (label, series) in enumerate(lines):
        colour = COLOURS[index % len(COLOURS)]
        points = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in zip(t, series, strict=False))
        if points:
            parts.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>'
            )
        parts.append(
            f'<text x="{WIDTH - RIGHT - 150 + 0}" y="{TOP + 14 + 13 * index}" fill="{colour}">'
            f"{escape(label)}</text>"
        )
    parts.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>'
    )
    parts.append("</svg>")
    return "".join(parts)
