"""Snapshots: applying changes (copy-on-write, stale drop), the pre-encoded bytes, and which FDv2
transfer a basis gets."""

from __future__ import annotations

import gzip
from typing import Any

import orjson
from delivery_support import flag, segment
from flagstaff_server.delivery import selector
from flagstaff_server.delivery.snapshot import (
    Applied,
    Snapshot,
    apply_change,
    build_snapshot,
    empty_snapshot,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def _apply(
    snapshot: Snapshot,
    seq: int,
    key: str,
    item: dict[str, Any] | None,
    *,
    kind: str = "flag",
    version: int | None = None,
    log_limit: int = 10,
) -> Applied | None:
    if version is None:
        assert item is not None
        version = item["version"]
    return apply_change(
        snapshot,
        seq=seq,
        kind="flag" if kind == "flag" else "segment",
        key=key,
        version=version,
        item=item,
        log_limit=log_limit,
    )


def _events(stream: bytes) -> list[tuple[str, Any]]:
    events = []
    for block in stream.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], orjson.loads(lines["data"])))
    return events


def test_body_holds_flags_and_segments_sorted_by_key() -> None:
    snapshot = build_snapshot(
        "p", "e", seq=3, flags={"b": flag("b"), "a": flag("a")}, segments={"s": segment("s")}
    )
    assert snapshot.body.startswith(b'{"flags":{"a":')
    assert snapshot.decoded() == {
        "flags": {"a": flag("a"), "b": flag("b")},
        "segments": {"s": segment("s")},
    }


def test_put_event_wraps_the_data_set_under_path_root() -> None:
    snapshot = build_snapshot("p", "e", seq=1, flags={"a": flag("a")}, segments={})
    [(name, data)] = _events(snapshot.put_event())
    assert name == "put"
    assert data == {"path": "/", "data": {"flags": {"a": flag("a")}, "segments": {}}}


def test_gzip_body_decompresses_to_the_body_and_is_computed_once() -> None:
    snapshot = build_snapshot("p", "e", seq=1, flags={"a": flag("a")}, segments={})
    compressed = snapshot.gzip_body()
    assert gzip.decompress(compressed) == snapshot.body
    assert snapshot.gzip_body() is compressed


def test_applying_a_newer_flag_changes_only_that_item_and_emits_a_patch() -> None:
    start = build_snapshot("p", "e", seq=1, flags={"a": flag("a"), "b": flag("b")}, segments={})
    applied = _apply(start, 2, "a", flag("a", 2, on=False))
    assert applied is not None
    new = applied.snapshot
    assert new.seq == 2
    assert new.flags["b"] is start.flags["b"]
    assert new.decoded()["flags"]["a"] == flag("a", 2, on=False)
    assert start.decoded()["flags"]["a"] == flag("a")
    assert new.etag != start.etag
    [(name, data)] = _events(applied.v1_event)
    assert (name, data) == ("patch", {"path": "/flags/a", "data": flag("a", 2, on=False)})


def test_a_delete_leaves_a_tombstone_that_blocks_an_older_put() -> None:
    start = build_snapshot("p", "e", seq=1, flags={"a": flag("a", 4)}, segments={})
    deleted = _apply(start, 2, "a", None, version=5)
    assert deleted is not None
    assert "a" not in deleted.snapshot.flags
    assert _events(deleted.v1_event) == [("delete", {"path": "/flags/a", "version": 5})]
    assert _apply(deleted.snapshot, 3, "a", flag("a", 5)) is None
    revived = _apply(deleted.snapshot, 4, "a", flag("a", 6))
    assert revived is not None
    assert revived.snapshot.flags["a"].version == 6


def test_segment_changes_use_segment_paths() -> None:
    applied = _apply(empty_snapshot("p", "e"), 1, "s", segment("s"), kind="segment")
    assert applied is not None
    assert _events(applied.v1_event)[0][1]["path"] == "/segments/s"
    assert applied.snapshot.decoded()["segments"] == {"s": segment("s")}


@settings(max_examples=60)
@given(
    versions=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=12),
    deletes=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_older_or_repeated_changes_leave_the_snapshot_unchanged(
    versions: list[int], deletes: list[bool]
) -> None:
    snapshot = empty_snapshot("p", "e")
    held = 0
    for seq, (version, delete) in enumerate(zip(versions, deletes, strict=False), start=1):
        item = None if delete else flag("a", version)
        applied = _apply(snapshot, seq, "a", item, version=version)
        if version <= held:
            assert applied is None
        else:
            assert applied is not None
            snapshot, held = applied.snapshot, version
        assert _apply(snapshot, snapshot.seq, "a", flag("a", 99)) is None


def test_a_current_basis_gets_intent_none() -> None:
    snapshot = build_snapshot("p", "e", seq=7, flags={"a": flag("a")}, segments={})
    transfer = snapshot.transfer_for(snapshot.state)
    assert (transfer.code, transfer.changes) == ("none", ())


def test_a_basis_behind_by_k_changes_gets_exactly_those_changes() -> None:
    snapshot = empty_snapshot("p", "e")
    states = [snapshot.state]
    for seq in range(1, 6):
        applied = _apply(snapshot, seq * 10, f"f{seq}", flag(f"f{seq}"))
        assert applied is not None
        snapshot = applied.snapshot
        states.append(snapshot.state)
    for k in range(1, 6):
        transfer = snapshot.transfer_for(states[-1 - k])
        assert transfer.code == "xfer-changes"
        assert [entry.seq for entry in transfer.changes] == [10 * s for s in range(6 - k, 6)]
    events = _events(snapshot.v2_stream_payload(snapshot.transfer_for(states[-3])))
    assert [name for name, _ in events] == [
        "server-intent",
        "put-object",
        "put-object",
        "payload-transferred",
    ]
    assert events[0][1]["payloads"][0]["intentCode"] == "xfer-changes"
    assert events[1][1] == {"version": 1, "kind": "flag", "key": "f4", "object": flag("f4")}
    assert events[-1][1] == {"state": snapshot.state, "version": 50}


def test_a_basis_older_than_the_log_or_foreign_or_unknown_gets_a_full_transfer() -> None:
    snapshot = empty_snapshot("p", "e")
    first_state = snapshot.state
    for seq in range(1, 5):
        applied = _apply(snapshot, seq, f"f{seq}", flag(f"f{seq}"), log_limit=2)
        assert applied is not None
        snapshot = applied.snapshot
    assert snapshot.transfer_for(first_state).code == "xfer-full"
    other = empty_snapshot("p", "other")
    assert snapshot.transfer_for(other.state).code == "xfer-full"
    assert snapshot.transfer_for("garbage").code == "xfer-full"
    assert snapshot.transfer_for(None).reason == "payload-missing"
    forged = selector.encode_state(snapshot.tag, 1, snapshot.seq, "0" * 16)
    assert snapshot.transfer_for(forged).code == "xfer-full"
    other_epoch = selector.encode_state(snapshot.tag, 2, snapshot.seq, snapshot.digest)
    assert snapshot.transfer_for(other_epoch).code == "xfer-full"


def test_full_transfer_lists_every_object_then_commits_the_selector() -> None:
    snapshot = build_snapshot(
        "p", "e", seq=9, flags={"a": flag("a", 3)}, segments={"s": segment("s", 2)}
    )
    transfer = snapshot.transfer_for(None)
    events = _events(snapshot.v2_stream_payload(transfer))
    assert events[0] == (
        "server-intent",
        {
            "payloads": [
                {
                    "id": snapshot.tag,
                    "target": 9,
                    "intentCode": "xfer-full",
                    "reason": "payload-missing",
                }
            ]
        },
    )
    assert events[1:3] == [
        ("put-object", {"version": 3, "kind": "flag", "key": "a", "object": flag("a", 3)}),
        ("put-object", {"version": 2, "kind": "segment", "key": "s", "object": segment("s", 2)}),
    ]
    assert events[3] == ("payload-transferred", {"state": snapshot.state, "version": 9})
    poll = orjson.loads(snapshot.v2_poll_body(transfer))
    assert [(e["event"], e["data"]) for e in poll["events"]] == events


def test_selector_state_round_trips_and_rejects_foreign_strings() -> None:
    state = selector.encode_state("abc", 3, 12, "ff00")
    assert state == "fs2.abc.3.12.ff00"
    assert selector.decode_state(state) == selector.Basis(tag="abc", epoch=3, seq=12, digest="ff00")
    bad_ones = ("", "fs1.abc.x.ff", "fs2.abc.1.ff", "fs1..1.ff", "fs1.a.1", "fs2.a.0.1.ff")
    for bad in (*bad_ones, "fs2.a.x.1.ff", "fs3.a.1.1.ff", "fs2.a.1.1.", "fs2.a.1.²."):
        assert selector.decode_state(bad) is None


def test_a_state_issued_before_epochs_reads_as_epoch_one() -> None:
    assert selector.decode_state("fs1.abc.12.ff00") == selector.Basis(
        tag="abc", epoch=1, seq=12, digest="ff00"
    )
