"""Approval requests in LaunchDarkly's shapes, pure: the bodies that create one (per flag, or
generic with a `resourceId`), review it (`approve`, `decline`, `comment`), apply it and edit it,
what its reviews add up to, and the `filter` of the list. No clock and no store: the caller
hands in "now", the reviews and the environment's settings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from flagstaff_server.domain.approval_settings import ApprovalSettings
from flagstaff_server.domain.document import require_comment
from flagstaff_server.domain.instruction import check_instructions
from flagstaff_server.domain.scheduled_change import (
    check_execution_date,
    check_schedule_instructions,
)
from flagstaff_server.errors import InvalidInput, ValidationError

MAX_DESCRIPTION = 5000
REVIEW_KINDS = ("approve", "decline", "comment")
EDIT_KINDS = (
    "replaceApprovalRequestInstructions",
    "updateApprovalRequestDescription",
    "updateApprovalRequestExecutionDate",
)
ReviewKind = Literal["approve", "decline", "comment"]
ReviewStatus = Literal["approved", "declined", "pending"]

_RESOURCE_ID = re.compile(
    r"^proj/(?P<project>[^:/;]+):env/(?P<environment>[^:/;]+):"
    r"(?P<kind>flag|segment)/(?P<key>[^:/;]+)$"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceId:
    """What a generic request names: one flag or segment in one environment."""

    kind: Literal["flag", "segment"]
    project: str
    environment: str
    key: str

    @property
    def text(self) -> str:
        return f"proj/{self.project}:env/{self.environment}:{self.kind}/{self.key}"


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestBody:
    """A parsed create body."""

    description: str
    instructions: list[dict[str, Any]]
    comment: str | None
    execution_ms: int | None
    notify_member_ids: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestEdit:
    """A parsed PATCH (Flagstaff's: LaunchDarkly has none): what to change, None to keep."""

    instructions: list[dict[str, Any]] | None = None
    instructions_path: str = "/instructions"
    description: str | None = None
    execution_ms: int | None = None
    clear_execution: bool = False
    comment: str | None = None

    @property
    def voids_reviews(self) -> bool:
        """Whether what would be applied changes, so the approvals given no longer hold."""
        return (
            self.instructions is not None or self.execution_ms is not None or self.clear_execution
        )


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    return body


def _description(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("'description' must be a non-blank string", path=path)
    if len(value) > MAX_DESCRIPTION:
        raise ValidationError(
            f"'description' is longer than {MAX_DESCRIPTION} characters", path=path
        )
    return value


def _strings(value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError("must be an array of strings", path=path)
    return list(value)


def parse_resource_id(value: Any) -> ResourceId:
    """`proj/P:env/E:flag/K` or `proj/P:env/E:segment/K`, as LaunchDarkly's `resourceId`."""
    match = _RESOURCE_ID.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValidationError(
            "'resourceId' must name one flag or segment in one environment: "
            "proj/<project>:env/<environment>:flag/<key> (or :segment/<key>)",
            path="/resourceId",
        )
    kind: Literal["flag", "segment"] = "flag" if match["kind"] == "flag" else "segment"
    return ResourceId(
        kind=kind, project=match["project"], environment=match["environment"], key=match["key"]
    )


def parse_request_body(body: Any, *, now_ms: int) -> RequestBody:
    """`{description, instructions, comment?, executionDate?, notifyMemberIds?}`; the
    instructions' meaning is checked against the resource by the caller."""
    body = _object(body)
    execution = body.get("executionDate")
    return RequestBody(
        description=_description(body.get("description"), "/description"),
        instructions=check_schedule_instructions(body.get("instructions"), "/instructions"),
        comment=require_comment(body),
        execution_ms=None
        if execution is None
        else check_execution_date(execution, "/executionDate", now_ms=now_ms),
        notify_member_ids=_strings(body.get("notifyMemberIds"), "/notifyMemberIds"),
    )


def parse_review_body(body: Any) -> tuple[ReviewKind, str | None]:
    """`{kind: approve|decline|comment, comment?}`; a `comment` review needs its comment."""
    body = _object(body)
    kind = body.get("kind")
    if kind not in REVIEW_KINDS:
        raise ValidationError(
            f"'kind' must be one of {', '.join(REVIEW_KINDS)}, got {kind!r}", path="/kind"
        )
    comment = require_comment(body)
    if kind == "comment" and not (comment or "").strip():
        raise ValidationError("a comment review needs a non-blank 'comment'", path="/comment")
    review: ReviewKind = kind
    return review, comment


def parse_apply_body(body: Any) -> str | None:
    """`{comment?}`; an empty body is taken as `{}`."""
    return None if body is None else require_comment(_object(body))


def parse_request_patch(body: Any, *, now_ms: int) -> RequestEdit:
    """A semantic patch of a pending request, all or nothing."""
    body = _object(body)
    comment = require_comment(body)
    fields: dict[str, Any] = {}
    for index, instruction in enumerate(check_instructions(body.get("instructions"))):
        kind, at = instruction["kind"], f"/instructions/{index}"
        value = instruction.get("value")
        if kind == "replaceApprovalRequestInstructions":
            fields["instructions_path"] = f"{at}/value"
            fields["instructions"] = check_schedule_instructions(value, f"{at}/value")
        elif kind == "updateApprovalRequestDescription":
            fields["description"] = _description(value, f"{at}/value")
        elif kind == "updateApprovalRequestExecutionDate":
            if value is None:
                fields["clear_execution"] = True
            else:
                fields["execution_ms"] = check_execution_date(value, f"{at}/value", now_ms=now_ms)
        else:
            raise ValidationError(
                f"unknown instruction kind {kind!r} for an approval request: use "
                + ", ".join(EDIT_KINDS),
                path=f"{at}/kind",
            )
    return RequestEdit(comment=comment, **fields)


# what the reviews add up to -------------------------------------------------------------------


def decisions(reviews: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each reviewer's standing decision: their latest `approve` or `decline` (comments decide
    nothing), so N approvals are N different reviewers."""
    standing: dict[str, str] = {}
    for review in reviews:
        if review["kind"] in ("approve", "decline"):
            standing[str(review["reviewerId"])] = str(review["kind"])
    return standing


def review_status(reviews: Sequence[Mapping[str, Any]], settings: ApprovalSettings) -> ReviewStatus:
    """LaunchDarkly's `reviewStatus`: declined while a reviewer's standing decision is a
    decline, approved once `minNumApprovals` reviewers approve, else pending."""
    standing = list(decisions(reviews).values())
    if "decline" in standing:
        return "declined"
    return "approved" if standing.count("approve") >= settings.min_num_approvals else "pending"


def refusal_to_apply(
    reviews: Sequence[Mapping[str, Any]], settings: ApprovalSettings
) -> str | None:
    """Why the request may not be applied yet (None: it may): too few approvals, or a decline
    where `canApplyDeclinedChanges` is false."""
    standing = list(decisions(reviews).values())
    approvals, declines = standing.count("approve"), standing.count("decline")
    if declines and not settings.can_apply_declined_changes:
        return (
            f"the request was declined ({declines} decline(s)) and the environment's approval "
            "settings do not allow applying declined changes (canApplyDeclinedChanges)"
        )
    if approvals < settings.min_num_approvals:
        declined = f", and declined by {declines}" if declines else ""
        return (
            f"the request has {approvals} approval(s) of the {settings.min_num_approvals} it "
            f"needs (minNumApprovals){declined}"
        )
    return None


# the list's filter ----------------------------------------------------------------------------

FILTER_FIELDS = (
    "notifyMemberIds",
    "requestorId",
    "resourceId",
    "resourceKind",
    "reviewStatus",
    "status",
    "projectKey",
)
_FILTER_TERM = re.compile(r"^\s*(?P<field>\w+)\s+(?P<op>equals|anyOf)\s+(?P<value>.+?)\s*$")


def _filter_terms(text: str) -> list[str]:
    """Split at commas outside brackets (`anyOf ["a", "b"]` keeps its commas)."""
    terms, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(text[start:at])
            start = at + 1
    terms.append(text[start:])
    return [term for term in terms if term.strip()]


def _filter_values(op: str, text: str) -> frozenset[str]:
    if op == "equals":
        return frozenset((text.strip().strip('"'),))
    if not (text.startswith("[") and text.endswith("]")):
        raise ValidationError('anyOf takes a list: ["a", "b"]', path="filter")
    return frozenset(item.strip().strip('"') for item in text[1:-1].split(",") if item.strip())


def parse_filter(text: str | None) -> dict[str, frozenset[str]]:
    """LaunchDarkly's `filter=field equals value, field anyOf ["a","b"]`: each field to the
    values it accepts. An unknown field or operator is a 400 naming the query parameter."""
    chosen: dict[str, frozenset[str]] = {}
    for term in _filter_terms(text or ""):
        match = _FILTER_TERM.match(term)
        if match is None:
            raise ValidationError(
                f"cannot read the filter term {term.strip()!r}: use 'field equals value' or "
                '\'field anyOf ["a", "b"]\'',
                path="filter",
            )
        if match["field"] not in FILTER_FIELDS:
            raise ValidationError(
                f"unknown filter field {match['field']!r}: use " + ", ".join(FILTER_FIELDS),
                path="filter",
            )
        chosen[match["field"]] = _filter_values(match["op"], match["value"])
    return chosen


def passes(filters: Mapping[str, frozenset[str]], facts: Mapping[str, Sequence[str]]) -> bool:
    """Whether a request whose fields are `facts` (each field to its values) passes every
    filter: some value of the field is among the accepted ones."""
    return all(accepted & set(facts.get(name, ())) for name, accepted in filters.items())
