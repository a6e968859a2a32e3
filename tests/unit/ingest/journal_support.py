"""Support for the processor tests: a run of analytics payloads appended to a journal."""

from __future__ import annotations

import orjson
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.record import Kind

BODY = orjson.dumps([{"kind": "identify", "context": {"key": "ana"}, "creationDate": 1}])


async def append(journal: Journal, first: int, count: int) -> int:
    """Submits payloads `id-first` .. `id-(first+count-1)`; the sequence of the last one."""
    last = 0
    for index in range(first, first + count):
        last = await journal.submit(
            kind=Kind.ANALYTICS,
            project="shop",
            environment="production",
            payload_id=f"id-{index}",
            payload=BODY,
            received_ms=1_000,
        )
    return last
