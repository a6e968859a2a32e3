"""The contexts explorer's reads: the context index searched by kind, part of the key and an
attribute (a SQLite analytics store), and a context's recent evaluations from the feature
events in raw payloads (single and multi-kind contexts, `contextKeys`, summaries ignored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.context_search import AttributeTest, evaluations_of
from flagstaff_server.ingest.payload_values import HOUR_MS
from flagstaff_server.ingest.record import Kind, Record

HOUR = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS


def record(seq: int, events: Any) -> Record:
    return Record(
        seq=seq,
        received_ms=HOUR,
        kind=Kind.ANALYTICS,
        project="shop",
        environment="production",
        payload_id=f"id-{seq}",
        payload=orjson.dumps(events),
    )


def index(at: int, context: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "index", "creationDate": HOUR + at, "context": context}


def feature(at: int, flag: str, **context: Any) -> dict[str, Any]:
    return {"kind": "feature", "creationDate": HOUR + at, "key": flag, "variation": 1, **context}


def keys_of(found: list[tuple[int, dict[str, Any]]]) -> list[str]:
    return [context["key"] for _, context in found]


def test_search_filters_by_kind_key_part_and_attribute_newest_first(tmp_path: Path) -> None:
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'a.db'}")
    events = [
        index(1, {"kind": "user", "key": "anna_1", "country": "se"}),
        index(2, {"kind": "user", "key": "bo%2", "country": "no", "groups": ["beta", "staff"]}),
        index(3, {"kind": "user", "key": "ANNA-3", "country": "se", "age": 41}),
        index(4, {"kind": "organization", "key": "anna-org", "plan": "pro"}),
    ]
    store.commit(None, [record(1, events)], now_ms=HOUR)

    def search(**filters: Any) -> list[str]:
        test = filters.pop("test", None)
        keep = test.matches if test else lambda _context: True
        args = {"kind": None, "key_part": None, **filters}
        return keys_of(store.search_contexts("shop", "production", keep=keep, limit=10, **args))

    assert search() == ["anna-org", "ANNA-3", "bo%2", "anna_1"]
    assert search(kind="user", key_part="anna") == ["ANNA-3", "anna_1"]
    # LIKE's wildcards are plain characters in the key part
    assert search(key_part="%") == ["bo%2"]
    assert search(key_part="_") == ["anna_1"]
    assert search(test=AttributeTest(name="country", value="se")) == ["ANNA-3", "anna_1"]
    assert search(test=AttributeTest(name="groups", value="staff")) == ["bo%2"]
    assert search(test=AttributeTest(name="age", value="41")) == ["ANNA-3"]
    assert search(test=AttributeTest(name="plan")) == ["anna-org"]
    limited = store.search_contexts(
        "shop", "production", kind=None, key_part=None, keep=lambda _c: True, limit=2
    )
    assert keys_of(limited) == ["anna-org", "ANNA-3"]
    assert store.seen_context("shop", "production", "user", "anna_1") == (
        HOUR + 1,
        events[0]["context"],
    )
    assert store.seen_context("shop", "production", "user", "nobody") is None
    assert store.newest_payloads("shop", "production", limit=5) == [orjson.dumps(events)]
    store.close()


def test_evaluations_name_the_context_in_every_form_newest_first() -> None:
    bodies = [
        orjson.dumps(
            [
                feature(1, "old", context={"kind": "user", "key": "u1"}),
                feature(2, "other-user", context={"kind": "user", "key": "u2"}),
                {"kind": "summary", "endDate": HOUR + 9, "features": {"f": {"counters": []}}},
            ]
        ),
        orjson.dumps(
            [
                feature(
                    5,
                    "multi",
                    context={"kind": "multi", "user": {"key": "u1"}, "org": {"key": "o"}},
                ),
                feature(4, "by-keys", contextKeys={"user": "u1"}),
                {**feature(6, "debugged", context={"kind": "user", "key": "u1"}), "kind": "debug"},
                feature(7, "same-key-other-kind", context={"kind": "org", "key": "u1"}),
            ]
        ),
    ]
    found = evaluations_of(bodies, kind="user", key="u1", limit=10)
    assert [item["flagKey"] for item in found] == ["debugged", "multi", "by-keys", "old"]
    assert found[-1] == {
        "creationDate": HOUR + 1,
        "flagKey": "old",
        "version": None,
        "variation": 1,
        "value": None,
        "reason": None,
        "kind": "feature",
    }
    assert len(evaluations_of(bodies, kind="user", key="u1", limit=2)) == 2
