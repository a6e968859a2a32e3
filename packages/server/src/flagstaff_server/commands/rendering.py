"""How flag-work commands print: JSON (the API's own document, a stable contract for scripts) or a
table cut to the terminal's width. The one place output is shaped; commands pick the columns.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN_COLUMN = 4
GAP = "  "


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    title: str
    value: Callable[[Mapping[str, Any]], Any]


def emit(output: str, document: Any, columns: Sequence[Column], rows: Sequence[Any]) -> None:
    """Print `document` as JSON, or `rows` (mappings) as a table of `columns`."""
    if output == "json":
        sys.stdout.write(json.dumps(document, indent=2, sort_keys=True) + "\n")
        return
    cells = [[cell_text(column.value(row)) for column in columns] for row in rows]
    width = shutil.get_terminal_size((100, 24)).columns
    sys.stdout.write(table([column.title for column in columns], cells, width))


def emit_fields(output: str, document: Any, fields: Sequence[tuple[str, Any]]) -> None:
    """One resource: JSON, or a two-column table of field names and values."""
    columns = [
        Column(title="FIELD", value=lambda r: r["f"]),
        Column(title="VALUE", value=lambda r: r["v"]),
    ]
    emit(output, document, columns, [{"f": name, "v": value} for name, value in fields])


def cell_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ",".join(cell_text(item) for item in value) or "-"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return " ".join(str(value).split())


def table(titles: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> str:
    """Left-aligned columns; when they overflow `width`, the widest are cut (ending in …)."""
    widths = [max([len(title), *(len(row[i]) for row in cells)]) for i, title in enumerate(titles)]
    budget = max(width - len(GAP) * (len(titles) - 1), MIN_COLUMN * len(titles))
    while sum(widths) > budget:
        widest = max(range(len(widths)), key=lambda i: widths[i])
        if widths[widest] <= MIN_COLUMN:
            break
        widths[widest] -= 1
    lines = [_line(titles, widths), *(_line(row, widths) for row in cells)]
    return "".join(line.rstrip() + "\n" for line in lines)


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    return GAP.join(
        _fit(value, size).ljust(size) for value, size in zip(values, widths, strict=True)
    )


def _fit(value: str, size: int) -> str:
    return value if len(value) <= size else value[: size - 1] + "…"
