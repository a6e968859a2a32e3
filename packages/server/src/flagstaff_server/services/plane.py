"""What every control-plane use case is handed: the store, the change feed, the clock and policy,
plus the one way to write (`ControlPlane.write`): a transaction that collects audit entries and
outbox changes, commits, and only then announces the new sequence number on the feed.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from flagstaff_server.services import webhook_outbox
from flagstaff_server.services.access import Actor
from flagstaff_server.services.caller_cache import CallerCache
from flagstaff_server.services.epochs import EpochGuard
from flagstaff_server.services.ports import (
    AuditEntry,
    ChangeFeed,
    ChangeKind,
    Clock,
    JsonObject,
    Store,
    UnitOfWork,
)
from flagstaff_server.services.sign_in_throttle import SignInThrottle
from flagstaff_server.services.sso_ports import OidcClient
from flagstaff_server.services.trigger_throttle import TriggerThrottle

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# 9999-12-31T23:59:59.999Z, the last moment a datetime holds: larger timestamps are refused at
# the edge rather than overflowing here.
MAX_EPOCH_MILLIS = 253_402_300_799_999
# Audit kinds of writes that cannot change who a caller is or what it may do (a token, its
# owner, roles and teams are none of these); any other write drops the cached callers.
CALLER_NEUTRAL = frozenset({"flag", "segment", "metric", "experiment"})


def epoch_millis(moment: datetime) -> int:
    """Unix epoch milliseconds, LaunchDarkly's timestamp format (exact, no float rounding)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(milliseconds=1)


def from_epoch_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def new_id() -> str:
    """24 hex digits, the shape of LaunchDarkly's `_id`s."""
    return secrets.token_hex(12)


@dataclass(slots=True)
class Transaction:
    """One unit of work on behalf of `actor` at `now`; use cases write through it."""

    uow: UnitOfWork
    actor: Actor
    now: datetime
    last_seq: int = 0
    caller_neutral: bool | None = None
    """Whether every audit entry so far is of a kind no caller is made of (`CALLER_NEUTRAL`);
    None before the first. Otherwise the commit makes this process forget its cached callers."""

    def change(
        self,
        *,
        project: str,
        environment: str,
        kind: ChangeKind,
        key: str,
        version: int,
        item: JsonObject | None,
    ) -> int:
        """Append an outbox record (delivery's view of the item; None = deleted)."""
        seq = self.uow.changes.append(
            project=project,
            environment=environment,
            kind=kind,
            key=key,
            version=version,
            item=item,
            at=self.now,
        )
        self.last_seq = max(self.last_seq, seq)
        return seq

    def audit(
        self,
        *,
        kind: str,
        resource: str,
        action: str,
        comment: str | None = None,
        patch: Any = None,
        before: JsonObject | None = None,
        after: JsonObject | None = None,
        entry_id: str | None = None,
    ) -> AuditEntry:
        """Record who did what to `resource` (a LaunchDarkly resource spec such as
        `proj/p:env/e:flag/k`), with the representation before and after, and queue it for the
        webhooks and chat integrations it concerns (in this transaction: `webhook_outbox`).
        `entry_id` (default: a new id) lets a job make its entry its unique key: a second
        transaction recording the same id fails with `AlreadyExists` and rolls back with
        everything it wrote."""
        self.caller_neutral = self.caller_neutral is not False and kind in CALLER_NEUTRAL
        entry = AuditEntry(
            id=entry_id or new_id(),
            at=self.now,
            actor=self.actor.token_id,
            kind=kind,
            resource=resource,
            action=action,
            comment=comment,
            patch=patch,
            before=before,
            after=after,
        )
        self.uow.audit.append(entry)
        webhook_outbox.enqueue(self.uow, entry)
        return entry


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlPlane:
    store: Store
    feed: ChangeFeed
    clock: Clock
    # How long a reset SDK or mobile key keeps working.
    key_grace: timedelta
    # The value of FLAGSTAFF_ADMIN_TOKEN, accepted as an unscoped admin token.
    admin_token: str | None = field(default=None, repr=False)
    # Failed sign-ins per account and client address, in this process's memory.
    sign_in_throttle: SignInThrottle = field(default_factory=SignInThrottle, repr=False)
    # Flag trigger calls per trigger and missed calls per client address, likewise.
    trigger_throttle: TriggerThrottle = field(default_factory=TriggerThrottle, repr=False)
    # Starts an epoch before the first write on a new PostgreSQL timeline (a promotion, PITR).
    epochs: EpochGuard = field(default_factory=EpochGuard, repr=False)
    # Talks to the OpenID provider of single sign-on; None: SSO is unavailable in this process.
    oidc: OidcClient | None = field(default=None, repr=False)
    # Callers verified by access token a moment ago (`services.caller_cache`).
    callers: CallerCache = field(default_factory=CallerCache, repr=False)

    def read(self) -> AbstractContextManager[UnitOfWork]:
        return self.store.unit_of_work(read_only=True)

    @contextmanager
    def write(self, actor: Actor) -> Iterator[Transaction]:
        """A transaction for `actor`: committed on clean exit (then the feed hears of its changes),
        rolled back with nothing announced when the block raises."""
        with self.store.unit_of_work() as uow:
            transaction = Transaction(uow=uow, actor=actor, now=self.clock())
            # before the use case reads anything: it must see the versions of the new epoch
            transaction.last_seq = self.epochs.check(uow, transaction.now)
            yield transaction
        if not transaction.caller_neutral:
            self.callers.forget_all()
        if transaction.last_seq:
            self.feed.publish(transaction.last_seq)
