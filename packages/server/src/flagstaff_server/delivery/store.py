"""The node's environments in memory: each one's current snapshot, credentials and open streams,
indexed by SDK key; applying a feed change swaps in the next snapshot and broadcasts it.

Owned by the event loop (no locks, no I/O). Requests read `Environment.snapshot` once and use that
immutable value for the whole response.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from flagstaff_core import DecodeError, decode_flag, decode_segment

from flagstaff_server.delivery import sse
from flagstaff_server.delivery.credential import Credentials, decode_credentials
from flagstaff_server.delivery.fanout import Broadcaster
from flagstaff_server.delivery.snapshot import (
    Holding,
    Snapshot,
    Transfer,
    apply_change,
    apply_overlay,
    empty_snapshot,
    rebased,
)
from flagstaff_server.services.ports import Change

log = logging.getLogger(__name__)

EnvironmentId = tuple[str, str]
ItemCheck = Callable[[sse.ItemKind, dict[str, Any]], None]
"""Raises ValueError for an item the SDKs could not load (it is dropped, never served)."""


def check_item(kind: sse.ItemKind, item: dict[str, Any]) -> None:
    """The default check: the item must decode with the evaluation core, as SDKs will decode it."""
    try:
        if kind == "flag":
            decode_flag(item)
        else:
            decode_segment(item)
    except DecodeError as exc:
        raise ValueError(f"{exc.path}: {exc.message}") from exc


Outcome = Literal["applied", "stale", "invalid", "environment", "removed", "epoch", "notice"]


class ChangeOverlay(Protocol):
    """Something served on top of the feed's data (break-glass overrides): it sees every flag
    change before the snapshot does and may serve another item or version in its place."""

    def rewrite(self, change: Change, snapshot: Snapshot) -> Change | None:
        """The change to apply instead of `change` (itself when the overlay holds nothing for
        its flag), or None when it is stale for the data beneath the overlay."""

    def base_view(self, snapshot: Snapshot) -> Holding:
        """`snapshot` as the feed's data alone, without the overlay's items."""

    def reset_bases(self, snapshot: Snapshot) -> list[tuple[str, int, dict[str, Any] | None]]:
        """After a full resync (docs/delivery.md, "Epochs"): take `snapshot`, the feed's data
        alone, as the base of every flag of its environment the overlay holds, with served
        versions still above those served before; the (flag key, version, item) to serve on
        top of `snapshot`."""


@dataclass(slots=True, kw_only=True)
class Environment:
    project: str
    key: str
    snapshot: Snapshot
    credentials: Credentials | None = None
    broadcaster: Broadcaster = field(default_factory=Broadcaster)
    updated: float = 0.0
    """Clock time (node clock) when the snapshot last changed or was loaded."""


class SnapshotStore:
    def __init__(
        self, *, log_limit: int, clock: Callable[[], float], check: ItemCheck | None = None
    ) -> None:
        self.log_limit = log_limit
        self.clock = clock
        self.check = check
        self.environments: dict[EnvironmentId, Environment] = {}
        self.evicted = 0
        self.overlay: ChangeOverlay | None = None
        self._by_sdk_key: dict[str, tuple[EnvironmentId, float]] = {}
        self._by_mobile_key: dict[str, tuple[EnvironmentId, float]] = {}
        self._by_client_side_id: dict[str, EnvironmentId] = {}

    def get(self, project: str, environment: str) -> Environment | None:
        return self.environments.get((project, environment))

    def find(self, sdk_key: str, now: float) -> Environment | None:
        """The environment `sdk_key` opens at wall-clock `now` (retired keys until expiry)."""
        found = self._by_sdk_key.get(sdk_key)
        if found is None or found[1] <= now:
            return None
        return self.environments.get(found[0])

    def find_mobile(self, mobile_key: str, now: float) -> Environment | None:
        """The environment `mobile_key` opens at wall-clock `now` (retired keys until expiry)."""
        found = self._by_mobile_key.get(mobile_key)
        if found is None or found[1] <= now:
            return None
        return self.environments.get(found[0])

    def find_client_side(self, client_side_id: str) -> Environment | None:
        """The environment a browser names by its client-side id (never secret, never retired)."""
        env_id = self._by_client_side_id.get(client_side_id)
        return None if env_id is None else self.environments.get(env_id)

    def put(self, snapshot: Snapshot, credentials: Credentials | None) -> Environment:
        """Install a whole snapshot (from disk)."""
        env = self._environment(snapshot.project, snapshot.environment)
        env.snapshot = snapshot
        env.updated = self.clock()
        if credentials is not None:
            env.credentials = credentials
            self._index()
        return env

    def apply(self, change: Change) -> Outcome:
        if change.kind == "environment":
            return self._apply_environment(change)
        if change.kind == "epoch":
            return "epoch"  # belongs to no environment: the node reads it (`DeliveryNode.apply`)
        if change.kind == "notice":
            return "notice"  # belongs to no environment: the node's `side_changes` read it
        kind: sse.ItemKind = change.kind
        env = self._environment(change.project, change.environment)
        if change.item is not None and self.check is not None:
            try:
                self.check(kind, change.item)
            except ValueError as exc:
                log.error("dropping invalid %s %r (seq %d): %s", kind, change.key, change.seq, exc)
                return "invalid"
        if kind == "flag" and self.overlay is not None and change.seq > env.snapshot.seq:
            rewritten = self.overlay.rewrite(change, env.snapshot)
            if rewritten is None:
                return "stale"
            change = rewritten
        try:
            applied = apply_change(
                env.snapshot,
                seq=change.seq,
                epoch=change.epoch,
                kind=kind,
                key=change.key,
                version=change.version,
                item=change.item,
                log_limit=self.log_limit,
            )
        except ValueError as exc:
            log.error("dropping unencodable %s %r (seq %d): %s", kind, change.key, change.seq, exc)
            return "invalid"
        if applied is None:
            return "stale"
        env.snapshot = applied.snapshot
        env.updated = self.clock()
        self.evicted += env.broadcaster.publish(applied.v1_event, applied.v2_event)
        return "applied"

    def apply_overlay(
        self, project: str, environment: str, key: str, version: int, item: dict[str, Any] | None
    ) -> bool:
        """Serve `item` (None: deleted) at `version` for flag `key`, from outside the feed (the
        overlay's own transitions); False when the environment is unknown or `version` stale."""
        env = self.environments.get((project, environment))
        if env is None:
            return False
        try:
            applied = apply_overlay(env.snapshot, kind="flag", key=key, version=version, item=item)
        except ValueError as exc:
            log.error("dropping unencodable overlay of flag %r: %s", key, exc)
            return False
        if applied is None:
            return False
        env.snapshot = applied.snapshot
        env.updated = self.clock()
        self.evicted += env.broadcaster.publish(applied.v1_event, applied.v2_event)
        return True

    def held(self, env: Environment) -> Holding:
        """What decides versions of changes from outside (a relay's upstream): the feed's data
        beneath any overlay."""
        return env.snapshot if self.overlay is None else self.overlay.base_view(env.snapshot)

    def adopt(self, staged: SnapshotStore, *, epoch: int, seq: int) -> int:
        """Take every environment from `staged` (built by replaying the store's whole history):
        open streams stay. An environment whose data differs is named (`epoch`, `seq`) with an
        empty change log (`snapshot.rebased`: the selectors and FDv2 versions its clients get
        are then above anything they held) and its streams get all of it (FDv1 `put`, FDv2
        `xfer-full`); one whose data is the same is renamed quietly; one `staged` lacks is
        removed and its streams closed. Returns how many environments' data changed."""
        changed = 0
        for env_id, fresh in staged.environments.items():
            env = self._environment(*env_id)
            old = env.snapshot
            if fresh.credentials is not None:
                env.credentials = fresh.credentials
            if old.position == fresh.snapshot.position:
                continue
            env.snapshot = rebased(fresh.snapshot, epoch=epoch, seq=seq)
            env.updated = self.clock()
            if old.digest == fresh.snapshot.digest:
                continue
            changed += 1
            full = env.snapshot.v2_stream_payload(Transfer("xfer-full", "stale"))
            self.evicted += env.broadcaster.publish(env.snapshot.put_event(), full)
        for env_id in [e for e in self.environments if e not in staged.environments]:
            self._remove(env_id)
            changed += 1
        self._index()
        return changed

    def replace_credentials(self, all_credentials: Iterable[Credentials]) -> None:
        """Credentials read from the store: the complete current set."""
        fresh = {(c.project, c.environment): c for c in all_credentials}
        for env_id, credentials in fresh.items():
            self._environment(*env_id).credentials = credentials
        for env_id, env in list(self.environments.items()):
            if env_id not in fresh and env.credentials is not None:
                self._remove(env_id)
        self._index()

    def _apply_environment(self, change: Change) -> Outcome:
        env_id = (change.project, change.environment)
        if change.item is None:
            self._remove(env_id)
            self._index()
            return "removed"
        try:
            credentials = decode_credentials(change.project, change.environment, change.item)
        except ValueError as exc:
            log.error("dropping environment change (seq %d): %s", change.seq, exc)
            return "invalid"
        self._environment(*env_id).credentials = credentials
        self._index()
        return "environment"

    def _environment(self, project: str, key: str) -> Environment:
        env = self.environments.get((project, key))
        if env is None:
            env = Environment(
                project=project,
                key=key,
                snapshot=empty_snapshot(project, key),
                updated=self.clock(),
            )
            self.environments[(project, key)] = env
        return env

    def _remove(self, env_id: EnvironmentId) -> None:
        env = self.environments.pop(env_id, None)
        if env is not None:
            env.broadcaster.close_all("environment deleted", sse.goodbye("environment-deleted"))

    def _index(self) -> None:
        index: dict[str, tuple[EnvironmentId, float]] = {}
        mobile: dict[str, tuple[EnvironmentId, float]] = {}
        client_side: dict[str, EnvironmentId] = {}
        for env_id, env in self.environments.items():
            credentials = env.credentials
            if credentials is None:
                continue
            for retired in credentials.retired_sdk_keys:
                index[retired.value] = (env_id, retired.expires)
            if credentials.sdk_key:
                index[credentials.sdk_key] = (env_id, float("inf"))
            for retired in credentials.retired_mobile_keys:
                mobile[retired.value] = (env_id, retired.expires)
            if credentials.mobile_key:
                mobile[credentials.mobile_key] = (env_id, float("inf"))
            if credentials.client_side_id:
                client_side[credentials.client_side_id] = env_id
        self._by_sdk_key = index
        self._by_mobile_key = mobile
        self._by_client_side_id = client_side
