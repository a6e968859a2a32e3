"""Storage port of approval requests (docs/workflows.md, "Approval requests"): a change to one
flag or segment in one environment, waiting for reviews before it is applied. Pure
declarations, like `services.ports`, which gathers them into the unit of work."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

ApprovalResourceKind = Literal["flag", "segment"]
ApprovalStatus = Literal["pending", "completed", "failed", "scheduled"]
"""LaunchDarkly's `status`: pending until applied; completed once applied; scheduled when the
applied request made a scheduled change (its `executionDate`); failed when that change failed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequestRecord:
    """One approval request. `version` is the compare-and-set token of every step (review,
    edit, apply), so two reviewers or two appliers never both win."""

    id: str
    project: str
    kind: ApprovalResourceKind
    key: str
    """The flag's or the segment's key."""
    environment: str
    status: ApprovalStatus = "pending"
    version: int = 1
    created: datetime
    doc: dict[str, Any]
    """Everything else: description, instructions, comment, requester, reviews, the resource's
    state when the request was made (for the conflict check), and once applied, by whom."""


class ApprovalRequestRepository(Protocol):
    def get(self, request_id: str) -> ApprovalRequestRecord | None: ...
    def add(self, record: ApprovalRequestRecord) -> None: ...
    def replace(self, record: ApprovalRequestRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`, else raise
        `VersionConflict` (`NotFound` when it is gone)."""
        ...

    def delete(self, request_id: str) -> None:
        """Raises `NotFound` for a missing request."""
        ...

    def delete_pending(self, project: str, kind: ApprovalResourceKind, key: str) -> int:
        """Remove the resource's pending requests (it is being deleted); returns how many."""
        ...

    def list(
        self,
        *,
        project: str | None = None,
        kind: ApprovalResourceKind | None = None,
        key: str | None = None,
        environment: str | None = None,
    ) -> list[ApprovalRequestRecord]:
        """Requests matching every given field, newest first (then by id)."""
        ...
