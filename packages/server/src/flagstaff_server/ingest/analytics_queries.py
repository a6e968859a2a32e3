"""What the insights API and the raw export read from the analytics store, each a query on a
connection the store opened: evaluation series, flag activity, SDK instances, a custom metric's
totals, recent contexts and their count, and pages of raw payloads. SQL only; no HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from sqlalchemy import Connection, func, select

from flagstaff_server.ingest.analytics_tables import (
    activity,
    contexts,
    customs,
    evaluations,
    instances,
    raw,
)
from flagstaff_server.ingest.flag_status import Activity
from flagstaff_server.ingest.payload_values import HOUR_MS, created_of, load_payload


def evaluation_series(
    connection: Connection,
    project: str,
    environment: str,
    flag_key: str,
    *,
    start_ms: int,
    end_ms: int,
) -> list[tuple[int, int, int]]:
    """(hour start ms, variation, count), ordered by hour then variation."""
    rows = connection.execute(
        select(evaluations.c.hour_ms, evaluations.c.variation, evaluations.c.count)
        .where(
            evaluations.c.project == project,
            evaluations.c.environment == environment,
            evaluations.c.flag_key == flag_key,
            evaluations.c.hour_ms >= start_ms - start_ms % HOUR_MS,
            evaluations.c.hour_ms < end_ms,
        )
        .order_by(evaluations.c.hour_ms, evaluations.c.variation)
    )
    return [(int(h), int(v), int(n)) for h, v, n in rows]


def flag_activity(
    connection: Connection, project: str, environment: str, *, recent_ms: int, long_ms: int
) -> dict[str, Activity]:
    """Per evaluated flag: first/last evaluation and the variations served in the hours
    from `recent_ms` and from `long_ms`."""
    times = {
        flag_key: (int(first), int(last))
        for flag_key, first, last in connection.execute(
            select(activity.c.flag_key, activity.c.first_ms, activity.c.last_ms).where(
                activity.c.project == project, activity.c.environment == environment
            )
        )
    }
    recent: dict[str, set[int]] = {}
    long: dict[str, set[int]] = {}
    for flag_key, hour, variation in connection.execute(
        select(evaluations.c.flag_key, evaluations.c.hour_ms, evaluations.c.variation)
        .where(
            evaluations.c.project == project,
            evaluations.c.environment == environment,
            evaluations.c.hour_ms >= long_ms - long_ms % HOUR_MS,
        )
        .distinct()
    ):
        long.setdefault(flag_key, set()).add(int(variation))
        if hour >= recent_ms - recent_ms % HOUR_MS:
            recent.setdefault(flag_key, set()).add(int(variation))
    return {
        key: Activity(
            first_ms=first,
            last_ms=last,
            recent_variations=frozenset(recent.get(key, ())),
            long_variations=frozenset(long.get(key, ())),
        )
        for key, (first, last) in times.items()
    }


def sdk_instances(connection: Connection, project: str, environment: str) -> list[dict[str, Any]]:
    """Every SDK instance seen in the environment, the most recently heard first."""
    rows = connection.execute(
        select(instances)
        .where(instances.c.project == project, instances.c.environment == environment)
        .order_by(instances.c.last_ms.desc())
    ).mappings()
    return [dict(row) for row in rows]


def metric(
    connection: Connection, project: str, environment: str, key: str
) -> tuple[int, int, float]:
    """Custom events named `key`: (events, events with a metric value, sum of the values)."""
    row = connection.execute(
        select(
            func.count(),
            func.count(customs.c.metric_value),
            func.sum(customs.c.metric_value),
        ).where(
            customs.c.project == project,
            customs.c.environment == environment,
            customs.c.key == key,
        )
    ).one()
    return int(row[0]), int(row[1]), float(row[2] or 0.0)


def recent_contexts(
    connection: Connection, project: str, environment: str, *, limit: int
) -> list[tuple[int, dict[str, Any]]]:
    """The most recently seen contexts, newest first: (last seen ms, context)."""
    rows = connection.execute(
        select(contexts.c.last_ms, contexts.c.context)
        .where(contexts.c.project == project, contexts.c.environment == environment)
        .order_by(contexts.c.last_ms.desc(), contexts.c.kind, contexts.c.key)
        .limit(limit)
    )
    return [(int(at), orjson.loads(body)) for at, body in rows]


def find_contexts(
    connection: Connection,
    project: str,
    environment: str,
    *,
    kind: str | None,
    key_part: str | None,
    page: int = 500,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Contexts seen, newest first, of `kind` (when given) whose key contains `key_part` (when
    given, case-insensitively): (last seen ms, context), read `page` rows at a time so a caller
    that stops early reads little."""
    where = [contexts.c.project == project, contexts.c.environment == environment]
    if kind is not None:
        where.append(contexts.c.kind == kind)
    if key_part:
        escaped = key_part.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where.append(contexts.c.key.ilike(f"%{escaped}%", escape="\\"))
    order = (contexts.c.last_ms.desc(), contexts.c.kind, contexts.c.key)
    offset = 0
    while True:
        rows = connection.execute(
            select(contexts.c.last_ms, contexts.c.context)
            .where(*where)
            .order_by(*order)
            .offset(offset)
            .limit(page)
        ).all()
        for at, body in rows:
            yield int(at), orjson.loads(body)
        if len(rows) < page:
            return
        offset += page


def seen_context(
    connection: Connection, project: str, environment: str, kind: str, key: str
) -> tuple[int, dict[str, Any]] | None:
    """One context seen: (last seen ms, context), or None."""
    row = connection.execute(
        select(contexts.c.last_ms, contexts.c.context).where(
            contexts.c.project == project,
            contexts.c.environment == environment,
            contexts.c.kind == kind,
            contexts.c.key == key,
        )
    ).first()
    return None if row is None else (int(row[0]), orjson.loads(row[1]))


def newest_payloads(
    connection: Connection, project: str, environment: str, *, limit: int
) -> list[bytes]:
    """The bodies of the `limit` raw payloads received last."""
    rows = connection.execute(
        select(raw.c.body)
        .where(raw.c.project == project, raw.c.environment == environment)
        .order_by(raw.c.id.desc())
        .limit(limit)
    )
    return [bytes(body) for (body,) in rows]


def context_count(connection: Connection, project: str, environment: str) -> int:
    return int(
        connection.execute(
            select(func.count()).where(
                contexts.c.project == project, contexts.c.environment == environment
            )
        ).scalar()
        or 0
    )


def raw_page(
    connection: Connection,
    project: str,
    environment: str,
    *,
    start_ms: int,
    end_ms: int,
    after: int,
    page: int,
) -> list[tuple[int, bytes]]:
    """Up to `page` raw payloads with events in [start, end), by id after `after`: (id, body)."""
    rows = connection.execute(
        select(raw.c.id, raw.c.body)
        .where(
            raw.c.project == project,
            raw.c.environment == environment,
            raw.c.last_ms >= start_ms,
            raw.c.first_ms < end_ms,
            raw.c.id > after,
        )
        .order_by(raw.c.id)
        .limit(page)
    )
    return [(int(i), bytes(b)) for i, b in rows]


def event_lines(bodies: Iterable[bytes], *, start_ms: int, end_ms: int) -> Iterator[bytes]:
    """The events of raw payload bodies created in [start, end), one JSON line each (a summary
    counts at its `endDate`)."""
    for body in bodies:
        parsed = load_payload(body)
        for event in parsed if isinstance(parsed, list) else [parsed]:
            if isinstance(event, dict) and start_ms <= created_of(event, start_ms) < end_ms:
                yield orjson.dumps(event) + b"\n"
