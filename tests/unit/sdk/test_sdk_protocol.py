"""Decoding LaunchDarkly payloads: FDv1 put/patch/delete and poll bodies, FDv2 transfers from
streams and poll bodies; malformed data is a PayloadError, unknown events are ignored."""

from __future__ import annotations

import json

import pytest
from delivery_support import flag, segment
from flagstaff_sdk.change_set import Selector
from flagstaff_sdk.errors import PayloadError
from flagstaff_sdk.protocol import (
    Fdv2Assembler,
    decode_fdv1_event,
    decode_fdv2_poll,
    decode_latest_all,
)


def dumps(obj: object) -> str:
    return json.dumps(obj)


def test_fdv1_put_is_an_authoritative_full_set() -> None:
    data = {"flags": {"a": flag("a")}, "segments": {"s": segment("s")}}
    change = decode_fdv1_event("put", dumps({"path": "/", "data": data}), requested_at=3)
    assert change is not None
    assert change.full
    assert change.authoritative
    assert set(change.flags) == {"a"}
    assert set(change.segments) == {"s"}


def test_fdv1_patch_and_delete_become_upserts_and_tombstones() -> None:
    patch = decode_fdv1_event(
        "patch", dumps({"path": "/segments/s", "data": segment("s", 4)}), requested_at=0
    )
    assert patch is not None
    assert patch.segments["s"].version == 4
    delete = decode_fdv1_event("delete", dumps({"path": "/flags/a", "version": 7}), requested_at=0)
    assert delete is not None
    assert delete.flags["a"].deleted
    assert delete.flags["a"].version == 7


@pytest.mark.parametrize(
    ("event", "data"),
    [
        ("put", "{not json"),
        ("put", dumps({"path": "/", "data": {"flags": {}}})),
        ("patch", dumps({"path": "/flags/a", "data": {"key": "a"}})),
        ("patch", dumps({"path": "/flags/a", "data": {"key": "a", "version": 1, "on": "yes"}})),
        ("delete", dumps({"path": "/flags/a"})),
    ],
    ids=["bad-json", "put-without-segments", "patch-without-version", "bad-flag", "no-version"],
)
def test_malformed_fdv1_events_are_payload_errors(event: str, data: str) -> None:
    with pytest.raises(PayloadError):
        decode_fdv1_event(event, data, requested_at=0)


def test_unknown_fdv1_events_and_paths_are_ignored() -> None:
    assert decode_fdv1_event("indirect/put", "{not json", requested_at=0) is None
    other = dumps({"path": "/other/x", "data": {}})
    assert decode_fdv1_event("patch", other, requested_at=0) is None


def test_fdv1_poll_body_needs_flags_and_segments() -> None:
    body = json.dumps({"flags": {"a": flag("a")}, "segments": {}}).encode()
    change = decode_latest_all(body, requested_at=1.5)
    assert change.full
    assert not change.authoritative
    assert change.requested_at == 1.5
    with pytest.raises(PayloadError):
        decode_latest_all(b'{"flags": {}}', requested_at=0)


def intent(code: str) -> str:
    return dumps({"payloads": [{"id": "p", "target": 1, "intentCode": code, "reason": "r"}]})


def put_object(key: str, version: int) -> str:
    return dumps({"kind": "flag", "key": key, "version": version, "object": flag(key, version)})


def test_fdv2_stream_transfer_full_then_changes_on_top() -> None:
    assembler = Fdv2Assembler(None, requested_at=0)
    assert assembler.feed("server-intent", intent("xfer-full")) is None
    assert assembler.feed("put-object", put_object("a", 1)) is None
    assert assembler.feed("heart-beat", "{}") is None
    full = assembler.feed("payload-transferred", dumps({"state": "s1", "version": 1}))
    assert full is not None
    assert full.full
    assert full.selector == Selector("s1", 1)
    assert full.basis is None
    assert set(full.flags) == {"a"}
    # later events on the same stream are changes based on s1
    assembler.feed("delete-object", dumps({"kind": "flag", "key": "a", "version": 2}))
    changes = assembler.feed("payload-transferred", dumps({"state": "s2", "version": 2}))
    assert changes is not None
    assert not changes.full
    assert changes.basis == Selector("s1", 1)
    assert changes.flags["a"].deleted


def test_fdv2_error_discards_uncommitted_objects_and_none_means_current() -> None:
    basis = Selector("b", 9)
    assembler = Fdv2Assembler(basis, requested_at=0)
    assembler.feed("server-intent", intent("xfer-changes"))
    assembler.feed("put-object", put_object("a", 1))
    assembler.feed("error", dumps({"payloadId": "p", "reason": "oops"}))
    assembler.feed("put-object", put_object("b", 1))
    change = assembler.feed("payload-transferred", dumps({"state": "s", "version": 10}))
    assert change is not None
    assert set(change.flags) == {"b"}
    none = Fdv2Assembler(basis, requested_at=0).feed("server-intent", intent("none"))
    assert none is not None
    assert none.current
    assert none.selector == basis


def test_fdv2_changes_after_intent_none_build_on_the_basis() -> None:
    # A reconnect with a current basis: `none`, then later changes as objects and a commit
    # without a new server-intent (reference §1.7; ldclient's builder expects changes here).
    basis = Selector("b", 9)
    assembler = Fdv2Assembler(basis, requested_at=0)
    none = assembler.feed("server-intent", intent("none"))
    assert none is not None
    assert none.current
    assert assembler.feed("put-object", put_object("a", 2)) is None
    delete = dumps({"kind": "flag", "key": "b", "version": 3})
    assert assembler.feed("delete-object", delete) is None
    first = assembler.feed("payload-transferred", dumps({"state": "s10", "version": 10}))
    assert first is not None
    assert not first.full
    assert not first.current
    assert first.basis == basis
    assert first.selector == Selector("s10", 10)
    assert first.flags["a"].version == 2
    assert first.flags["b"].deleted
    assembler.feed("put-object", put_object("a", 3))
    second = assembler.feed("payload-transferred", dumps({"state": "s11", "version": 11}))
    assert second is not None
    assert not second.full
    assert second.basis == Selector("s10", 10)
    assert set(second.flags) == {"a"}


def test_fdv2_objects_before_any_intent_are_payload_errors() -> None:
    assembler = Fdv2Assembler(Selector("b", 9), requested_at=0)
    with pytest.raises(PayloadError, match="outside a transfer"):
        assembler.feed("put-object", put_object("a", 1))
    with pytest.raises(PayloadError, match="without a server-intent"):
        assembler.feed("payload-transferred", dumps({"state": "s", "version": 10}))


def test_fdv2_poll_body_and_its_errors() -> None:
    body = {
        "events": [
            {"event": "server-intent", "data": json.loads(intent("xfer-full"))},
            {"event": "put-object", "data": json.loads(put_object("a", 3))},
            {"event": "payload-transferred", "data": {"state": "s", "version": 4}},
        ]
    }
    change = decode_fdv2_poll(json.dumps(body).encode(), None, requested_at=0)
    assert change.selector == Selector("s", 4)
    assert change.flags["a"].version == 3
    with pytest.raises(PayloadError):
        decode_fdv2_poll(b'{"events": [{"event": "put-object", "data": {}}]}', None, requested_at=0)
    with pytest.raises(PayloadError):
        decode_fdv2_poll(b'{"events": []}', None, requested_at=0)
