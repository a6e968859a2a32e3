"""Operator notices travel the change feed beside flags (kind "notice", no project or
environment): the snapshot store leaves them to the node's readers and makes no environment of
them."""

from __future__ import annotations

from delivery_support import ENVIRONMENT, PROJECT, change, environment, flag
from flagstaff_server.delivery.store import SnapshotStore

NOTICE = {
    "_id": "0123456789abcdef01234567",
    "title": "EU edits are read-only",
    "message": "",
    "severity": "warning",
    "regions": [],
    "creationDate": 1,
    "expiresAt": None,
    "_source": "api",
}


def test_a_notice_change_belongs_to_no_environment() -> None:
    store = SnapshotStore(log_limit=10, clock=lambda: 0.0)
    assert store.apply(change(1, "environment", ENVIRONMENT, environment())) == "environment"
    notice = change(2, "notice", NOTICE["_id"], NOTICE, project="", env="")
    assert store.apply(notice) == "notice"
    assert store.apply(change(3, "flag", "a", flag("a"))) == "applied"
    removed = change(4, "notice", NOTICE["_id"], None, version=2, project="", env="")
    assert store.apply(removed) == "notice"
    assert list(store.environments) == [(PROJECT, ENVIRONMENT)]
    assert list(store.environments[(PROJECT, ENVIRONMENT)].snapshot.flags) == ["a"]
