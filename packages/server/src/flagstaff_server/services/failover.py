"""Failover use cases (`flagstaff dr`): where the control plane's database stands, and promoting
a hot standby so that its region takes the writes.

Promotion is PostgreSQL's (pg_promote); what Flagstaff adds is what must follow it on the new
primary: a new epoch, so feed positions and versions never go backwards or collide with what the
old primary handed out, and the record of which region now holds the primary.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from flagstaff_server.errors import InvalidInput, StoreUnavailable
from flagstaff_server.services import epochs
from flagstaff_server.services.ports import Clock, DatabaseState, Store

DEFAULT_PROMOTE_WAIT_SECONDS = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Promotion:
    promoted: bool
    """False when the database was a primary already (promoting is idempotent)."""
    state: DatabaseState
    """The database after promotion, epoch and primary region included."""


def database_status(store: Store) -> DatabaseState:
    return store.replication.state()


def promote(
    store: Store,
    *,
    region: str,
    clock: Clock,
    wait_seconds: float = DEFAULT_PROMOTE_WAIT_SECONDS,
) -> Promotion:
    """Promote the standby behind `store` and make the epoch and the primary region follow. On a
    primary only the last two are made sure of. `InvalidInput` for an embedded database (SQLite
    has no standby); `StoreUnavailable` when the database does not answer, or the promotion
    does not finish within `wait_seconds`."""
    before = store.replication.state()
    if before.role == "embedded":
        raise InvalidInput(
            "the database is embedded (SQLite): it has no standby to promote", path="database"
        )
    promoted = before.role == "standby"
    if promoted and not store.replication.promote(wait_seconds):
        raise StoreUnavailable(
            f"the standby did not finish its promotion within {wait_seconds:g}s; "
            "`flagstaff dr status` shows when it has, then run `flagstaff dr promote` again"
        )
    epoch = start_epoch_after_promotion(store, clock())
    after = store.replication.state()
    store.replication.record_primary_region(region, timeline=after.timeline, at=clock())
    return Promotion(
        promoted=promoted,
        state=dataclasses.replace(after, epoch=epoch, primary_region=region),
    )


def start_epoch_after_promotion(store: Store, at: datetime) -> int:
    """On the new primary, start the next epoch when its timeline is not the one the current
    epoch recorded (`epochs.follow_timeline`: idempotent, so promoting twice starts one), and
    return the current epoch."""
    epochs.follow_timeline(store, "promote", at=at)
    with store.unit_of_work(read_only=True) as uow:
        return uow.epochs.current().epoch
