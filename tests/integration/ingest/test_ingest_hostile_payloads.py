"""Payloads that acceptance lets in (valid JSON, events with a string `kind`) but whose members no
analytics column can hold: numbers beyond 64 bits or beyond a double, times past the year 9999,
NUL inside keys (PostgreSQL's text cannot hold it). Each must be processed like any other payload,
its usable events counted and the rest skipped: one of them failing its batch would fail every
retry of it, and processing would stop for good behind it while the journal fills.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from flagstaff_server.domain.document import KEY_MAX_LENGTH
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.payload_values import HOUR_MS
from flagstaff_server.ingest.record import Kind, Record
from support.services import postgres_database

HOUR = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS
NUMBERS = {
    "@LONG": "k" * 300,  # longer than any key column, and than any key the API allows
    "@HOUR": str(HOUR),
    "@I64": str(2**63),  # one past the largest 64-bit signed integer
    "@HUGE": "9" * 400,  # no 64-bit column nor a double can hold it
}


def text(template: str) -> str:
    """A payload's text, with the numbers above written in."""
    for name, value in NUMBERS.items():
        template = template.replace(name, value)
    return template


# Each analytics payload holds one usable summary of flag `good` (one evaluation of variation 0)
# beside its hostile event, so a payload skipped whole shows as a missing count.
GOOD = (
    '{"kind":"summary","startDate":@HOUR,"endDate":@HOUR,'
    '"features":{"good":{"counters":[{"variation":0,"count":1}]}}}'
)
HOSTILE_EVENTS = [
    # numbers in the members processing reads
    '{"kind":"summary","endDate":@HOUR,"features":{"f":{"counters":[{"count":@I64}]}}}',
    '{"kind":"summary","endDate":@HOUR,"features":{"f":{"counters":[{"variation":@I64,"count":1}]}}}',
    '{"kind":"summary","endDate":1e300,"features":{"f":{"counters":[{"count":1}]}}}',
    '{"kind":"feature","key":"f","creationDate":@I64,"context":{"key":"a"}}',
    '{"kind":"custom","key":"m","creationDate":@HOUR,"metricValue":1e308,"contextKeys":{"user":"a"}}',
    # numbers orjson refuses, in members that acceptance skips unchecked
    '{"kind":"custom","key":"m","creationDate":@HOUR,"data":1e400,"contextKeys":{"user":"a"}}',
    '{"kind":"feature","key":"f","creationDate":@HOUR,"context":{"key":"b","n":@HUGE}}',
    # NUL in keys
    '{"kind":"summary","endDate":@HOUR,"features":{"a\\u0000b":{"counters":[{"count":1}]}}}',
    '{"kind":"feature","key":"f\\u0000","creationDate":@HOUR,"context":{"key":"c\\u0000"}}',
    '{"kind":"custom","key":"m\\u0000","creationDate":@HOUR,"contextKeys":{"us\\u0000er":"a"}}',
    '{"kind":"feature","key":"f","context":{"kind":"multi","o\\u0000":{"key":"x"}}}',
    # texts longer than their columns (found by tests/fuzz/test_fuzz_events.py on PostgreSQL)
    '{"kind":"summary","endDate":@HOUR,"features":{"@LONG":{"counters":[{"count":1}]}}}',
    '{"kind":"feature","key":"@LONG","creationDate":@HOUR,"context":{"key":"d"}}',
    '{"kind":"custom","key":"@LONG","creationDate":@HOUR,"contextKeys":{"user":"a"}}',
    '{"kind":"index","creationDate":@HOUR,"context":{"kind":"@LONG","key":"e"}}',
    '{"kind":"index","creationDate":@HOUR,"context":{"kind":"multi","@LONG":{"key":"e"}}}',
    '{"kind":"custom","key":"m","creationDate":@HOUR,"contextKeys":{"user":"@LONG@LONG@LONG@LONG"}}',
]
HOSTILE_DIAGNOSTICS = [
    '{"kind":"diagnostic","id":{"diagnosticId":"x\\u0000"},"creationDate":@HOUR}',
    '{"kind":"diagnostic","id":{"diagnosticId":"sdk-1"},"creationDate":@HOUR,'
    '"sdk":{"name":"n\\u0000"},"droppedEvents":@I64,"dataSinceDate":@HUGE,'
    '"platform":{"a\\u0000":"\\u0000"},"streamInits":[{"timestamp":1e400,"failed":false}]}',
    '{"kind":"diagnostic","id":{"diagnosticId":"@LONG"},"creationDate":@HOUR}',
    '{"kind":"diagnostic-init","id":{"diagnosticId":"sdk-2"},"creationDate":@HOUR,'
    '"sdk":{"name":"@LONG","version":"@LONG","wrapperName":"@LONG"}}',
]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.service)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AnalyticsStore]:
    if request.param == "sqlite":
        analytics = AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}")
        yield analytics
        analytics.close()
        return
    with postgres_database("flagstaff_hostile") as url:
        analytics = AnalyticsStore(url)
        yield analytics
        analytics.close()


def record(seq: int, kind: Kind, payload: str) -> Record:
    return Record(
        seq=seq,
        received_ms=HOUR + 5,
        kind=kind,
        project="shop",
        environment="production",
        payload_id=f"payload-{seq}",
        payload=payload.encode(),
    )


def test_payloads_with_unstorable_members_are_processed_not_retried_forever(
    store: AnalyticsStore,
) -> None:
    analytics = [
        record(seq, Kind.ANALYTICS, text(f"[{GOOD},{event}]"))
        for seq, event in enumerate(HOSTILE_EVENTS, start=1)
    ]
    diagnostics = [
        record(100 + seq, Kind.DIAGNOSTIC, text(event))
        for seq, event in enumerate(HOSTILE_DIAGNOSTICS)
    ]

    committed = store.commit("node", [*analytics, *diagnostics], now_ms=HOUR + 10)

    assert committed.payloads == len(analytics) + len(diagnostics)
    assert store.position("node") == diagnostics[-1].seq
    # every payload's usable summary counted once: none was skipped whole
    series = store.evaluation_series("shop", "production", "good", start_ms=HOUR, end_ms=HOUR + 1)
    assert series == [(HOUR, 0, len(analytics))]
    # the export reads every stored payload back, the one holding 1e400 too
    exported = [
        orjson.loads(line)
        for line in store.export("shop", "production", start_ms=HOUR, end_ms=HOUR + HOUR_MS)
    ]
    assert sum(event.get("data", 0) is None for event in exported) == 1  # 1e400, read as null
    assert sum(
        event["kind"] == "summary" and "good" in event["features"] for event in exported
    ) == (len(analytics))
    # the usable diagnostic instances are reported (without names too long to keep), the NUL
    # one and the one whose id is too long are not
    instances = store.sdk_instances("shop", "production")
    assert sorted(
        (i["instance_id"], i["sdk_name"], i["sdk_version"], i["dropped_events"]) for i in instances
    ) == [("sdk-1", None, None, 0), ("sdk-2", None, None, 0)]


def test_events_of_the_longest_keys_the_api_allows_are_counted(store: AnalyticsStore) -> None:
    """Project, environment and flag keys may be 256 characters long (the management API's
    limit), and so may a custom event's key: each is stored as it is."""
    longest = "k" * KEY_MAX_LENGTH
    event = (
        '[{"kind":"summary","startDate":@HOUR,"endDate":@HOUR,'
        f'"features":{{"{longest}":{{"counters":[{{"variation":0,"count":2}}]}}}}}},'
        f'{{"kind":"custom","key":"{longest}","creationDate":@HOUR,"contextKeys":{{"user":"a"}}}}]'
    )
    payload = Record(
        seq=1,
        received_ms=HOUR + 5,
        kind=Kind.ANALYTICS,
        project=longest,
        environment=longest,
        payload_id="p-1",
        payload=text(event).encode(),
    )

    assert store.commit("node", [payload], now_ms=HOUR + 10).payloads == 1

    series = store.evaluation_series(longest, longest, longest, start_ms=HOUR, end_ms=HOUR + 1)
    assert series == [(HOUR, 0, 2)]
