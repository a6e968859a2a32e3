"""The FDv2 change log kept on disk with the snapshot: written, read back after a restart so a
client a few changes behind gets exactly those changes, bounded, and ignored (full transfers,
never wrong deltas) when the file is torn, corrupt or does not lead to the snapshot beside it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from delivery_support import (
    ENVIRONMENT,
    PROJECT,
    SDK_KEY,
    FixedFeed,
    UnreachableFeed,
    change,
    environment,
    fdv2_poll,
    flag,
    segment,
)
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode, snapshot_file
from flagstaff_server.delivery.change_log_file import checksum, decode_log, encode_log
from flagstaff_server.delivery.snapshot import (
    Snapshot,
    apply_change,
    empty_snapshot,
    with_kept_log,
)
from flagstaff_server.services.ports import ChangeFeed
from hypothesis import given, settings
from hypothesis import strategies as st
from support.deadlines import eventually
from support.in_process import asgi_client

AUTH = {"Authorization": SDK_KEY}
BACKLOG = [
    change(1, "environment", ENVIRONMENT, environment()),
    change(2, "flag", "a", flag("a")),
    change(3, "segment", "s", segment("s")),
]
LATER = [
    change(4, "flag", "a", flag("a", 2, on=False)),
    change(5, "flag", "b", flag("b")),
    change(6, "segment", "s", None, version=2),
]
LOG_FILE = f"logs/{PROJECT}~{ENVIRONMENT}.log"
ENV_FILE = f"environments/{PROJECT}~{ENVIRONMENT}.json"


def _node(data_dir: Path, feed: ChangeFeed, *, log_limit: int = 500) -> DeliveryNode:
    config = DeliveryConfig(
        data_dir=data_dir,
        log_limit=log_limit,
        persist_delay_seconds=0.01,
        feed_retry_seconds=0.05,
    )
    return DeliveryNode(feed, config)


def _client(node: DeliveryNode) -> httpx.AsyncClient:
    return asgi_client(node.app, base_url="http://n")


def _intent(events: list[dict[str, Any]]) -> str:
    code: str = events[0]["data"]["payloads"][0]["intentCode"]
    return code


def _objects(events: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [
        (event["event"], event["data"]["key"], event["data"]["version"])
        for event in events
        if event["event"] in ("put-object", "delete-object")
    ]


async def _run_with_states(data_dir: Path, *, log_limit: int = 500) -> list[str]:
    """A node that applies BACKLOG then LATER and stops (writing its files); returns the FDv2
    state after seq 3, 4, 5 and 6."""
    node = _node(data_dir, FixedFeed(BACKLOG), log_limit=log_limit)
    states = []
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        states.append((await fdv2_poll(client))[-1]["data"]["state"])
        for later in LATER:
            node.apply(later)
            states.append((await fdv2_poll(client))[-1]["data"]["state"])
    return states


async def test_a_restarted_node_gives_a_basis_in_the_kept_log_exactly_the_changes_since(
    tmp_path: Path,
) -> None:
    states = await _run_with_states(tmp_path)
    # the feed is down after the restart: whatever delta is served comes from the disk copy
    restarted = _node(tmp_path, UnreachableFeed())
    async with restarted.lifespan(), _client(restarted) as client:
        behind_three = await fdv2_poll(client, states[0])
        assert _intent(behind_three) == "xfer-changes"
        assert _objects(behind_three) == [
            ("put-object", "a", 2),
            ("put-object", "b", 1),
            ("delete-object", "s", 2),
        ]
        assert behind_three[-1]["data"]["state"] == states[-1]
        behind_one = await fdv2_poll(client, states[2])
        assert _intent(behind_one) == "xfer-changes"
        assert _objects(behind_one) == [("delete-object", "s", 2)]
        current = await fdv2_poll(client, states[-1])
        assert [_intent(current)] == ["none"]
        assert len(current) == 1


async def test_changes_after_the_restart_extend_the_kept_log(tmp_path: Path) -> None:
    states = await _run_with_states(tmp_path)
    more = change(7, "flag", "c", flag("c"))
    restarted = _node(tmp_path, FixedFeed([*BACKLOG, *LATER, more]))
    async with restarted.lifespan(), _client(restarted) as client:
        await eventually(lambda: restarted.position == 7)
        events = await fdv2_poll(client, states[1])
        assert _intent(events) == "xfer-changes"
        assert _objects(events) == [
            ("put-object", "b", 1),
            ("delete-object", "s", 2),
            ("put-object", "c", 1),
        ]


async def test_the_kept_log_is_bounded_and_a_basis_older_than_it_gets_a_full_transfer(
    tmp_path: Path,
) -> None:
    states = await _run_with_states(tmp_path, log_limit=2)
    kept = decode_log((tmp_path / LOG_FILE).read_bytes())
    assert [entry.seq for entry in kept.entries] == [5, 6]
    restarted = _node(tmp_path, UnreachableFeed(), log_limit=2)
    async with restarted.lifespan(), _client(restarted) as client:
        assert _intent(await fdv2_poll(client, states[0])) == "xfer-full"
        assert _objects(await fdv2_poll(client, states[1])) == [
            ("put-object", "b", 1),
            ("delete-object", "s", 2),
        ]
    # a node configured for a shorter log than the file holds keeps only the newest entries
    shorter = _node(tmp_path, UnreachableFeed(), log_limit=1)
    async with shorter.lifespan(), _client(shorter) as client:
        assert _intent(await fdv2_poll(client, states[1])) == "xfer-full"
        assert _objects(await fdv2_poll(client, states[2])) == [("delete-object", "s", 2)]


def _truncate(raw: bytes) -> bytes:
    return raw[: len(raw) - 20]


def _flip_a_byte_in_an_entry(raw: bytes) -> bytes:
    at = raw.index(b'"key":"b"') + len(b'"key":"')
    return raw[:at] + b"c" + raw[at + 1 :]


def _drop_the_last_entry(raw: bytes) -> bytes:
    return raw[: raw.rstrip(b"\n").rindex(b"\n") + 1]


def _garbage(raw: bytes) -> bytes:
    return b"\x00\xff not a log"


def _header_only(raw: bytes) -> bytes:
    return raw.split(b"\n", 1)[0]


@pytest.mark.parametrize(
    "damage",
    [_truncate, _flip_a_byte_in_an_entry, _drop_the_last_entry, _garbage, _header_only],
)
async def test_a_torn_or_corrupt_log_is_ignored_and_clients_behind_get_full_transfers(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    states = await _run_with_states(tmp_path)
    path = tmp_path / LOG_FILE
    path.write_bytes(damage(path.read_bytes()))
    restarted = _node(tmp_path, UnreachableFeed())
    async with restarted.lifespan(), _client(restarted) as client:
        for state in states[:-1]:
            events = await fdv2_poll(client, state)
            assert _intent(events) == "xfer-full"
            assert {key for _e, key, _v in _objects(events)} == {"a", "b"}
        assert _intent(await fdv2_poll(client, states[-1])) == "none"


async def test_a_log_that_stops_short_of_its_snapshot_is_ignored(tmp_path: Path) -> None:
    """An intact log whose newest entry is older than the snapshot beside it (the snapshot's
    write survived a crash, the log's did not): the changes in between are missing."""
    node = _node(tmp_path, FixedFeed(BACKLOG))
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        basis = (await fdv2_poll(client))[-1]["data"]["state"]
        node.apply(LATER[0])
        await eventually(lambda: (tmp_path / LOG_FILE).exists() and node.counts["persist"] > 0)
        older_log = (tmp_path / LOG_FILE).read_bytes()
        assert len(decode_log(older_log).entries) == 3
        node.apply(LATER[1])
    (tmp_path / LOG_FILE).write_bytes(older_log)
    restarted = _node(tmp_path, UnreachableFeed())
    async with restarted.lifespan(), _client(restarted) as client:
        assert _intent(await fdv2_poll(client, basis)) == "xfer-full"


async def test_a_log_from_another_environment_is_ignored(tmp_path: Path) -> None:
    states = await _run_with_states(tmp_path)
    other = empty_snapshot(PROJECT, "staging")
    (tmp_path / LOG_FILE).write_bytes(encode_log(other))
    restarted = _node(tmp_path, UnreachableFeed())
    async with restarted.lifespan(), _client(restarted) as client:
        assert _intent(await fdv2_poll(client, states[0])) == "xfer-full"


async def test_a_log_written_ahead_of_a_snapshot_lost_in_a_crash_keeps_what_leads_to_it(
    tmp_path: Path,
) -> None:
    """The log is written before its snapshot: a crash between the two leaves a log that runs
    past the snapshot. Its tail is dropped, and the feed's replay appends it again."""
    node = _node(tmp_path, FixedFeed(BACKLOG))
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        basis = (await fdv2_poll(client))[-1]["data"]["state"]
        node.apply(LATER[0])
        await eventually(lambda: (tmp_path / LOG_FILE).exists() and node.counts["persist"] > 0)
        older_snapshot = (tmp_path / ENV_FILE).read_bytes()
        position = (tmp_path / "position.json").read_bytes()
        for later in LATER[1:]:
            node.apply(later)
    (tmp_path / ENV_FILE).write_bytes(older_snapshot)
    (tmp_path / "position.json").write_bytes(position)

    cut_off = _node(tmp_path, UnreachableFeed())
    async with cut_off.lifespan(), _client(cut_off) as client:
        events = await fdv2_poll(client, basis)
        assert _objects(events) == [("put-object", "a", 2)]

    replayed = _node(tmp_path, FixedFeed([*BACKLOG, *LATER]))
    async with replayed.lifespan(), _client(replayed) as client:
        await eventually(lambda: replayed.position == 6)
        assert _objects(await fdv2_poll(client, basis)) == [
            ("put-object", "a", 2),
            ("put-object", "b", 1),
            ("delete-object", "s", 2),
        ]


async def test_without_a_log_file_the_node_starts_as_before_with_an_empty_log(
    tmp_path: Path,
) -> None:
    states = await _run_with_states(tmp_path)
    shutil.rmtree(tmp_path / "logs")
    restarted = _node(tmp_path, UnreachableFeed())
    async with restarted.lifespan(), _client(restarted) as client:
        assert _intent(await fdv2_poll(client, states[0])) == "xfer-full"
        assert _intent(await fdv2_poll(client, states[-1])) == "none"


# the disk round trip as a property ----------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c"])
STEP = st.tuples(
    st.sampled_from(["flag", "segment", "epoch"]), KEYS, st.booleans(), st.integers(1, 3)
)


def _reloaded(snapshot: Snapshot, log_limit: int) -> Snapshot:
    raw = snapshot_file.encode_environment(snapshot, None)
    fresh, _credentials = snapshot_file.decode_environment(raw)
    kept = decode_log(encode_log(snapshot))
    restored = with_kept_log(fresh, kept.floor, kept.entries, log_limit)
    assert restored is not None
    return restored


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP, max_size=25), log_limit=st.integers(0, 8))
def test_every_basis_gets_the_same_answer_from_a_reloaded_snapshot(
    steps: list[tuple[str, str, bool, int]], log_limit: int
) -> None:
    snapshot = empty_snapshot("p", "e")
    states = [snapshot.state]
    versions: dict[tuple[str, str], int] = {}
    seq, epoch = 0, 1
    for kind, key, delete, bump in steps:
        seq += 1
        if kind == "epoch":  # the database started an epoch: seqs jump on
            seq, epoch = seq + 1000, epoch + 1
            continue
        version = versions.get((kind, key), 0) + bump
        versions[(kind, key)] = version
        item = None if delete else (flag(key, version) if kind == "flag" else segment(key, version))
        applied = apply_change(
            snapshot,
            seq=seq,
            epoch=epoch,
            kind="flag" if kind == "flag" else "segment",
            key=key,
            version=version,
            item=item,
            log_limit=log_limit,
        )
        if applied is not None:
            snapshot = applied.snapshot
            states.append(snapshot.state)
    reloaded = _reloaded(snapshot, log_limit)
    assert reloaded.state == snapshot.state
    for state in states:
        before, after = snapshot.transfer_for(state), reloaded.transfer_for(state)
        assert (after.code, after.changes) == (before.code, before.changes)
        assert reloaded.v2_poll_body(after) == snapshot.v2_poll_body(before)


def test_a_log_written_before_epochs_reads_as_epoch_one() -> None:
    snapshot = empty_snapshot("p", "e")
    for seq, key in enumerate(("a", "b"), start=1):
        applied = apply_change(
            snapshot, seq=seq, kind="flag", key=key, version=1, item=flag(key), log_limit=5
        )
        assert applied is not None
        snapshot = applied.snapshot
    body = b"".join(
        orjson.dumps([entry.seq, entry.digest, entry.event.decode()]) + b"\t" + entry.data + b"\n"
        for entry in snapshot.log
    )
    header = {
        "format": 1,
        "project": "p",
        "environment": "e",
        "floor": [snapshot.log_floor[1], snapshot.log_floor[2]],
        "entries": len(snapshot.log),
        "checksum": checksum(body),
    }
    kept = decode_log(orjson.dumps(header) + b"\n" + body)
    assert kept.floor == snapshot.log_floor
    assert [entry.state for entry in kept.entries] == [entry.state for entry in snapshot.log]
    assert {entry.epoch for entry in kept.entries} == {1}
    fresh, _ = snapshot_file.decode_environment(snapshot_file.encode_environment(snapshot, None))
    restored = with_kept_log(fresh, kept.floor, kept.entries, 5)
    assert restored is not None
    legacy_basis = f"fs1.{snapshot.tag}.1.{snapshot.log[0].digest}"
    assert restored.transfer_for(legacy_basis).code == "xfer-changes"
