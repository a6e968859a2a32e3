"""`delivery.replay.HistoryFold`: folding a whole history into snapshots at once gives exactly
what applying its changes one by one gives (data, seq, epoch, digest, tombstones, credentials),
for any history: stale versions, deletions, environments deleted and made again, invalid items."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from delivery_support import environment, flag, segment
from flagstaff_server.delivery.replay import HistoryFold
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.delivery.sse import ItemKind
from flagstaff_server.delivery.store import SnapshotStore
from flagstaff_server.services.ports import Change
from hypothesis import given, settings
from hypothesis import strategies as st

T0 = datetime(2026, 3, 1, tzinfo=UTC)
ENVIRONMENTS = ("e1", "e2")


def check(kind: ItemKind, item: dict[str, Any]) -> None:
    if item.get("bad"):
        raise ValueError("an item SDKs could not load")


STEP = st.tuples(
    st.sampled_from(["flag", "segment", "environment", "epoch"]),
    st.sampled_from(ENVIRONMENTS),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["put", "delete", "bad"]),
    st.integers(1, 6),
)


def history(steps: list[tuple[str, str, str, str, int]]) -> list[Change]:
    changes: list[Change] = []
    seq, epoch = 0, 1
    for kind, env, key, action, version in steps:
        seq += 1
        if kind == "epoch":
            seq, epoch = seq + 1000, epoch + 1
            continue
        item: dict[str, Any] | None
        if action == "delete":
            item = None
        elif kind == "environment":
            item = environment(f"sdk-{env}", clientSideId=env.rjust(24, "0"))
            if action == "bad":
                item = {"sdkKey": 7}
        else:
            item = flag(key, version) if kind == "flag" else segment(key, version)
            if action == "bad":
                item = {**item, "bad": True}
        changes.append(
            Change(
                seq=seq,
                project="p",
                environment=env,
                kind=kind,  # type: ignore[arg-type]
                key=env if kind == "environment" else key,
                version=version,
                item=item,
                at=T0,
                epoch=epoch,
            )
        )
    return changes


def state(snapshot: Snapshot) -> tuple[Any, ...]:
    return (
        snapshot.position,
        snapshot.body,
        dict(snapshot.tombstones),
        {k: i.version for k, i in snapshot.flags.items()},
        {k: i.version for k, i in snapshot.segments.items()},
    )


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(STEP, max_size=40))
def test_folding_a_history_gives_what_applying_it_change_by_change_gives(
    steps: list[tuple[str, str, str, str, int]],
) -> None:
    changes = history(steps)
    applied = SnapshotStore(log_limit=10, clock=lambda: 0.0, check=check)
    folded = HistoryFold(check)
    for change in changes:
        applied.apply(change)
        folded.add(change)
    built = {(s.project, s.environment): (s, c) for s, c in folded.snapshots()}
    assert built.keys() == applied.environments.keys()
    for env_id, env in applied.environments.items():
        snapshot, credentials = built[env_id]
        assert state(snapshot) == state(env.snapshot)
        assert credentials == env.credentials
