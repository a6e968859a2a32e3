"""The evaluation cache: flag data compiled once per snapshot, equal contexts evaluated once per
snapshot, a bounded LRU, and ETags that change with the snapshot, the view and the context."""

from __future__ import annotations

import orjson
import pytest
from delivery_support import flag
from flagstaff_core import Availability
from flagstaff_server.delivery.client_context import read_context
from flagstaff_server.delivery.evaluation_cache import EvaluationCache, etag_of, view_name
from flagstaff_server.delivery.snapshot import apply_change, build_snapshot
from flagstaff_server.errors import StoreUnavailable

BROWSER = {"usingEnvironmentId": True, "usingMobileKey": False}


def test_flag_data_is_compiled_once_per_snapshot() -> None:
    cache = EvaluationCache()
    first = build_snapshot("p", "e", seq=1, flags={"a": flag("a")}, segments={})
    assert cache.data(first) is cache.data(first)
    applied = apply_change(
        first, seq=2, kind="flag", key="b", version=1, item=flag("b"), log_limit=5
    )
    assert applied is not None
    second = cache.data(applied.snapshot)
    assert set(second.flags) == {"a", "b"}
    assert cache.counts["compile"] == 2


def test_equal_contexts_are_evaluated_once_and_views_filter_flags() -> None:
    cache = EvaluationCache()
    flags = {"web": {**flag("web"), "clientSideAvailability": BROWSER}, "server": flag("server")}
    snapshot = build_snapshot("p", "e", seq=1, flags=flags, segments={})
    one = read_context({"kind": "user", "key": "u", "plan": "a"})
    same = read_context({"plan": "a", "key": "u", "kind": "user"})
    browser = cache.client_results(snapshot, one, Availability.CLIENT_SIDE, with_reasons=False)
    again = cache.client_results(snapshot, same, Availability.CLIENT_SIDE, with_reasons=False)
    assert again == browser
    assert (cache.counts["evaluate"], cache.counts["hit"]) == (1, 1)
    assert set(orjson.loads(browser.body)) == {"web"}
    everything = cache.client_results(snapshot, one, Availability.ALL, with_reasons=True)
    body = orjson.loads(everything.body)
    assert set(body) == {"web", "server"}
    assert body["web"]["reason"] == {"kind": "FALLTHROUGH"}
    assert everything.etag != browser.etag


def test_the_lru_is_bounded() -> None:
    cache = EvaluationCache(capacity=3)
    snapshot = build_snapshot("p", "e", seq=1, flags={"a": flag("a")}, segments={})
    contexts = [read_context({"key": f"u{n}"}) for n in range(5)]
    for client in contexts:
        cache.client_results(snapshot, client, Availability.ALL, with_reasons=False)
    cache.client_results(snapshot, contexts[0], Availability.ALL, with_reasons=False)
    assert cache.counts["evaluate"] == 6  # u0 was evicted by u3/u4
    cache.client_results(snapshot, contexts[4], Availability.ALL, with_reasons=False)
    assert cache.counts["hit"] == 1


def test_etag_depends_on_digest_view_and_fingerprint() -> None:
    base = etag_of("d1", "client-side", b"f1")
    assert base == etag_of("d1", "client-side", b"f1")
    assert base.startswith(b'"')
    assert base.endswith(b'"')
    others = {
        etag_of("d2", "client-side", b"f1"),
        etag_of("d1", "mobile", b"f1"),
        etag_of("d1", "client-side", b"f2"),
        etag_of("d1", view_name(Availability.CLIENT_SIDE, True), b"f1"),
    }
    assert base not in others
    assert len(others) == 4


def test_a_data_set_that_cannot_compile_is_unavailable_not_empty() -> None:
    broken = {"a": {**flag("a"), "rules": "not a list"}}
    snapshot = build_snapshot("p", "e", seq=1, flags=broken, segments={})
    with pytest.raises(StoreUnavailable):
        EvaluationCache().data(snapshot)
