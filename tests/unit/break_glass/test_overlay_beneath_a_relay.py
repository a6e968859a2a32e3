"""A relay decides its upstream's changes against the data beneath its own overrides: an
upstream that still serves the stored flag does not undo an override pushed to the relay, and
an upstream change to that flag is served overridden, above every version served before."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
from break_glass_support import Operator
from delivery_support import flag
from flagstaff_core import decode_data
from flagstaff_server.break_glass.document import decode_document
from flagstaff_server.break_glass.overlay import Overlay
from flagstaff_server.delivery.snapshot import build_snapshot
from flagstaff_server.delivery.store import SnapshotStore
from flagstaff_server.relay.reconcile import changes_from_data
from flagstaff_server.services.ports import Change


def served(store: SnapshotStore) -> dict[str, object]:
    env = store.get("relay", "production")
    assert env is not None
    item: dict[str, object] = orjson.loads(env.snapshot.flags["banner"].encoded)
    return item


def test_upstream_data_neither_undoes_an_override_nor_escapes_it(tmp_path: Path) -> None:
    operator = Operator.create(tmp_path / "keys")
    store = SnapshotStore(log_limit=10, clock=lambda: 0.0)
    overlay = Overlay()
    store.overlay = overlay
    store.put(
        build_snapshot(
            "relay", "production", seq=1, flags={"banner": flag("banner", 3)}, segments={}
        ),
        None,
    )
    env = store.get("relay", "production")
    assert env is not None
    document = decode_document(operator.override("banner", project="relay"))
    entry = overlay.decide(document, env.snapshot, document.issued_at)
    overlay.commit(entry)
    assert store.apply_overlay(
        "relay", "production", "banner", entry.served_version, entry.served_item()
    )
    assert (served(store)["on"], served(store)["version"]) == (False, 4)

    same = decode_data({"flags": {"banner": flag("banner", 3)}, "segments": {}})
    assert changes_from_data(store.held(env), same) == []
    assert changes_from_data(env.snapshot, same) != []  # what the relay diffed against before

    newer = decode_data({"flags": {"banner": flag("banner", 4, fallthrough=0)}, "segments": {}})
    (upstream_change,) = changes_from_data(store.held(env), newer)
    outcome = store.apply(
        Change(
            seq=2,
            project="relay",
            environment="production",
            kind="flag",
            key="banner",
            version=upstream_change.version,
            item=upstream_change.item,
            at=datetime.now(UTC),
        )
    )
    assert outcome == "applied"
    assert (served(store)["on"], served(store)["version"]) == (False, 5)
    assert served(store)["fallthrough"] == {"variation": 0}
