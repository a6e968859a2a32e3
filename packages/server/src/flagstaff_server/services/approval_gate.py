"""Whether a change may go straight to the store: the approval and comment rules of the
environments it alters (docs/workflows.md, "Approval settings"). Every write path of flags and
segments calls `check_change` with the environments its change alters, inside its transaction;
nothing here writes but the audit entry of a bypass.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from flagstaff_server.domain.approval_settings import ResourceKind, settings_of
from flagstaff_server.errors import ApprovalRequired, ValidationError
from flagstaff_server.services.plane import Transaction

BYPASS_ACTION = "bypassRequiredApproval"


@dataclass(frozen=True, slots=True, kw_only=True)
class Clearance:
    """What a change has been through before it reaches the store."""

    approved: frozenset[str] = field(default_factory=frozenset)
    """Environments whose requirements (approval, comment) an applied approval request met."""
    everywhere: bool = False
    """Cleared when it was made: a scheduled change runs what was approved, or allowed, when it
    was created."""

    def covers(self, environment: str) -> bool:
        return self.everywhere or environment in self.approved


DIRECT = Clearance()
"""A change asked for directly (a PATCH, a copy, a delete, an import)."""
PRECLEARED = Clearance(everywhere=True)


def approved_in(environment: str) -> Clearance:
    """The clearance of an approval request for `environment`, once it may be applied."""
    return Clearance(approved=frozenset((environment,)))


def check_change(
    tx: Transaction,
    *,
    kind: ResourceKind,
    project: str,
    key: str,
    environments: Iterable[str],
    tags: Collection[str],
    comment: str | None,
    clearance: Clearance,
    resource_of: Callable[[str], str],
    comment_required: bool = True,
) -> None:
    """Refuse the change unless every environment it alters allows it.

    An environment whose approval settings cover the resource (`required`, or one of `tags` in
    `requiredApprovalTags`) needs the change to come through an approval request for it
    (`clearance`); otherwise `ApprovalRequired` (405), unless the actor may bypass approvals,
    which is recorded in the audit log (`bypassRequiredApproval` on `resource_of(environment)`).
    An environment with `requireComments` needs a non-blank `comment` (400 at `/comment`) on
    requests that can carry one (`comment_required`).
    """
    for environment in sorted(set(environments)):
        if clearance.covers(environment):
            continue
        record = tx.uow.environments.get(project, environment)
        if record is None:
            continue
        if settings_of(record.doc, kind).applies_to(tags):
            if not tx.actor.bypasses_approvals:
                raise ApprovalRequired(refusal(kind, project, key, environment))
            tx.audit(
                kind=kind,
                resource=resource_of(environment),
                action=BYPASS_ACTION,
                comment=comment,
            )
        if comment_required and record.doc.get("requireComments") and not (comment or "").strip():
            raise ValidationError(
                f"environment {environment!r} requires a comment on every change",
                path="/comment",
            )


def refusal(kind: ResourceKind, project: str, key: str, environment: str) -> str:
    if kind == "flag":
        where = (
            f"POST /api/v2/projects/{project}/flags/{key}/environments/{environment}"
            "/approval-requests"
        )
    else:
        where = (
            f"POST /api/v2/approval-requests with resourceId "
            f"proj/{project}:env/{environment}:segment/{key}"
        )
    return (
        f"environment {environment!r} requires approval for changes to the {kind} {key!r}: "
        f"ask for it with an approval request ({where})"
    )
