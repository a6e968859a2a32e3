"""The SQL store: units of work on SQLite or PostgreSQL through one SQLAlchemy engine, with the
schema migrated on open. Driver failures leave here only as `StoreUnavailable`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from flagstaff_server.adapters.sql.account_repository import SqlAccounts, SqlSessions
from flagstaff_server.adapters.sql.approval_request_repository import SqlApprovalRequests
from flagstaff_server.adapters.sql.audit_repository import SqlAudit
from flagstaff_server.adapters.sql.change_repository import SqlChanges
from flagstaff_server.adapters.sql.engine import (
    UNAVAILABLE,
    WRITE_OPTION,
    create_store_engine,
    describe_unavailable,
)
from flagstaff_server.adapters.sql.environment_repository import SqlEnvironments
from flagstaff_server.adapters.sql.epoch_repository import SqlEpochs
from flagstaff_server.adapters.sql.flag_repository import SqlFlags
from flagstaff_server.adapters.sql.keyed_repository import SqlKeyed
from flagstaff_server.adapters.sql.lease_repository import SqlLeases
from flagstaff_server.adapters.sql.migration import upgrade
from flagstaff_server.adapters.sql.notice_repository import SqlNotices
from flagstaff_server.adapters.sql.project_repository import SqlProjects
from flagstaff_server.adapters.sql.replication import SqlReplication, is_read_only_refusal
from flagstaff_server.adapters.sql.scheduled_change_repository import SqlScheduledChanges
from flagstaff_server.adapters.sql.schema import (
    automated_releases,
    code_ref_branches,
    code_ref_extinctions,
    code_ref_repositories,
    custom_roles,
    experiments,
    metrics,
    sso,
    teams,
)
from flagstaff_server.adapters.sql.segment_repository import SqlSegments
from flagstaff_server.adapters.sql.token_repository import SqlTokens
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.adapters.sql.trigger_repository import SqlTriggers
from flagstaff_server.adapters.sql.webhook_repository import SqlDeliveries, SqlWebhooks
from flagstaff_server.errors import RegionReadOnly, StoreUnavailable
from flagstaff_server.services.ports import Store

log = logging.getLogger(__name__)


class SqlUnitOfWork:
    """Repositories are made on first use: a read touches two or three of the 27, and making
    them all was ~3% of a flag read's CPU (issue 22's profile)."""

    def __init__(self, connection: Connection, *, read_only: bool) -> None:
        self._tx = Transaction(connection, read_only=read_only)

    @cached_property
    def projects(self) -> SqlProjects:
        return SqlProjects(self._tx)

    @cached_property
    def environments(self) -> SqlEnvironments:
        return SqlEnvironments(self._tx)

    @cached_property
    def flags(self) -> SqlFlags:
        return SqlFlags(self._tx)

    @cached_property
    def segments(self) -> SqlSegments:
        return SqlSegments(self._tx)

    @cached_property
    def tokens(self) -> SqlTokens:
        return SqlTokens(self._tx)

    @cached_property
    def audit(self) -> SqlAudit:
        return SqlAudit(self._tx)

    @cached_property
    def changes(self) -> SqlChanges:
        return SqlChanges(self._tx)

    @cached_property
    def accounts(self) -> SqlAccounts:
        return SqlAccounts(self._tx)

    @cached_property
    def sessions(self) -> SqlSessions:
        return SqlSessions(self._tx)

    @cached_property
    def epochs(self) -> SqlEpochs:
        return SqlEpochs(self._tx)

    @cached_property
    def notices(self) -> SqlNotices:
        return SqlNotices(self._tx)

    @cached_property
    def leases(self) -> SqlLeases:
        return SqlLeases(self._tx)

    @cached_property
    def webhooks(self) -> SqlWebhooks:
        return SqlWebhooks(self._tx)

    @cached_property
    def deliveries(self) -> SqlDeliveries:
        return SqlDeliveries(self._tx)

    @cached_property
    def scheduled_changes(self) -> SqlScheduledChanges:
        return SqlScheduledChanges(self._tx)

    @cached_property
    def triggers(self) -> SqlTriggers:
        return SqlTriggers(self._tx)

    @cached_property
    def approval_requests(self) -> SqlApprovalRequests:
        return SqlApprovalRequests(self._tx)

    @cached_property
    def metrics(self) -> SqlKeyed:
        return SqlKeyed(self._tx, metrics, "metric")

    @cached_property
    def experiments(self) -> SqlKeyed:
        return SqlKeyed(self._tx, experiments, "experiment")

    @cached_property
    def custom_roles(self) -> SqlKeyed:
        return SqlKeyed(self._tx, custom_roles, "custom role")

    @cached_property
    def teams(self) -> SqlKeyed:
        return SqlKeyed(self._tx, teams, "team")

    @cached_property
    def code_ref_repositories(self) -> SqlKeyed:
        return SqlKeyed(self._tx, code_ref_repositories, "repository")

    @cached_property
    def code_ref_branches(self) -> SqlKeyed:
        return SqlKeyed(self._tx, code_ref_branches, "branch")

    @cached_property
    def code_ref_extinctions(self) -> SqlKeyed:
        return SqlKeyed(self._tx, code_ref_extinctions, "extinction")

    @cached_property
    def releases(self) -> SqlKeyed:
        return SqlKeyed(self._tx, automated_releases, "automated release")

    @cached_property
    def sso(self) -> SqlKeyed:
        return SqlKeyed(self._tx, sso, "single sign-on record")


class SqlStore:
    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        connect_later: bool = False,
        region: str = "local",
    ) -> None:
        """Connect to `url` (sqlite:///PATH or postgresql://...) and, unless told otherwise,
        bring its schema up to date (on a hot standby: check that it is, since the primary's
        migrations replicate). With `connect_later`, an unreachable database is not an
        error here: the schema is brought up to date on the first use that reaches it (a
        delivery node must start while the database is down). `region` names this process's
        region in the `RegionReadOnly` a standby's refusal of a write becomes."""
        self._engine = create_store_engine(url)
        self._region = region
        self.replication = SqlReplication(self._engine)
        self._autocommit_reads = self._engine.dialect.name == "postgresql"
        self._pending_migration = migrate
        self._migration_lock = threading.Lock()
        try:
            self._migrate_if_pending()
        except StoreUnavailable as exc:
            if not connect_later:
                self._engine.dispose()  # the caller gets no store to close
                raise
            log.warning("%s; will retry on first use", exc.message)

    def _migrate_if_pending(self) -> None:
        if not self._pending_migration:
            return
        with self._migration_lock:
            if self._pending_migration:
                self._translated(lambda: upgrade(self._engine))
                self._pending_migration = False

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    @contextmanager
    def unit_of_work(self, *, read_only: bool = False) -> Iterator[SqlUnitOfWork]:
        self._migrate_if_pending()
        try:
            with self._engine.connect() as connection:
                connection.execution_options(**{WRITE_OPTION: not read_only})
                if read_only and self._autocommit_reads:
                    # each statement sees the latest commits under READ COMMITTED anyway, so
                    # BEGIN/COMMIT would only add two round trips
                    connection.execution_options(isolation_level="AUTOCOMMIT")
                with connection.begin():
                    yield SqlUnitOfWork(connection, read_only=read_only)
        except UNAVAILABLE as exc:
            raise StoreUnavailable(describe_unavailable(self._engine, exc)) from exc
        except DBAPIError as exc:
            if is_read_only_refusal(exc):
                raise self._read_only() from exc
            raise

    def _read_only(self) -> RegionReadOnly:
        """The refusal, saying where the primary is when the database can tell."""
        try:
            state = self.replication.state()
        except StoreUnavailable:
            return RegionReadOnly(region=self._region)
        return RegionReadOnly(
            region=self._region, primary_region=state.primary_region, upstream=state.upstream
        )

    def ping(self) -> None:
        self._migrate_if_pending()

        def probe() -> None:
            with self._engine.connect() as connection:
                connection.execute(text("SELECT 1"))
                connection.rollback()

        self._translated(probe)

    def close(self) -> None:
        self._engine.dispose()

    def _translated(self, action: Callable[[], None]) -> None:
        try:
            action()
        except UNAVAILABLE as exc:
            raise StoreUnavailable(describe_unavailable(self._engine, exc)) from exc


if TYPE_CHECKING:
    _conforms: type[Store] = SqlStore
