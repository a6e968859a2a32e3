"""JSON documents in text columns: the same text on SQLite and PostgreSQL (nothing queries inside
it), written and read with orjson; a missing document is NULL."""

from __future__ import annotations

from typing import Any

import orjson


def dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def dump_optional(value: Any) -> str | None:
    return None if value is None else dump(value)


def load_optional(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)
