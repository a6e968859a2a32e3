"""The storage contract of the records replaced by compare-and-set on their `version`: scheduled
changes, triggers, approval requests, metrics and experiments behave the same in every store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from flagstaff_server.errors import NotFound, VersionConflict
from flagstaff_server.services.approval_ports import ApprovalRequestRecord
from flagstaff_server.services.experiment_ports import KeyedRecord
from flagstaff_server.services.ports import Store, UnitOfWork
from flagstaff_server.services.workflow_ports import ScheduledChangeRecord, TriggerRecord

T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Versioned:
    """One kind of versioned record: a sample, its repository in a unit of work, and how a
    stored one is read back."""

    record: Any
    gone: dict[str, str]
    """The fields that name a record the store does not hold."""
    repository: Callable[[UnitOfWork], Any]
    read: Callable[[Any, Any], Any]


def _by_id(repository: Any, record: Any) -> Any:
    return repository.get(record.id)


def _by_key(repository: Any, record: Any) -> Any:
    return repository.get(record.project, record.environment, record.key)


KINDS = {
    "scheduled change": Versioned(
        record=ScheduledChangeRecord(
            id="sc1", project="p", flag="f", environment="e", execution=T0, created=T0, doc={}
        ),
        gone={"id": "gone"},
        repository=lambda uow: uow.scheduled_changes,
        read=_by_id,
    ),
    "trigger": Versioned(
        record=TriggerRecord(
            id="t1", project="p", flag="f", environment="e", secret_hash="h", created=T0, doc={}
        ),
        gone={"id": "gone"},
        repository=lambda uow: uow.triggers,
        read=_by_id,
    ),
    "approval request": Versioned(
        record=ApprovalRequestRecord(
            id="ar1", project="p", kind="flag", key="f", environment="e", created=T0, doc={}
        ),
        gone={"id": "gone"},
        repository=lambda uow: uow.approval_requests,
        read=_by_id,
    ),
    "metric": Versioned(
        record=KeyedRecord(id="m1", project="p", key="m", created=T0, doc={}),
        gone={"key": "gone"},
        repository=lambda uow: uow.metrics,
        read=_by_key,
    ),
}


@pytest.mark.parametrize("kind", KINDS.values(), ids=list(KINDS))
def test_replace_is_compare_and_set_on_the_version(store: Store, kind: Versioned) -> None:
    first = kind.record
    with store.unit_of_work() as uow:
        kind.repository(uow).add(first)
    second = replace(first, version=2, doc={"note": "second"})
    with store.unit_of_work() as uow:
        kind.repository(uow).replace(second, expected_version=1)

    with pytest.raises(VersionConflict) as conflict, store.unit_of_work() as uow:
        kind.repository(uow).replace(replace(first, version=3), expected_version=1)
    assert conflict.value.path == "/_version"
    assert "is at version 2, not 1" in str(conflict.value)

    with pytest.raises(NotFound), store.unit_of_work() as uow:
        kind.repository(uow).replace(replace(first, **kind.gone), expected_version=1)

    with store.unit_of_work(read_only=True) as uow:
        assert kind.read(kind.repository(uow), first) == second
