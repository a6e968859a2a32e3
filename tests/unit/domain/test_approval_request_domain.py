"""The pure rules of approval requests: what reviews add up to, when a request may be applied,
the list's filter, the bodies, and which instructions went stale."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.approval_conflict import stale_parts
from flagstaff_server.domain.approval_request import (
    parse_filter,
    parse_request_body,
    parse_request_patch,
    parse_resource_id,
    parse_review_body,
    passes,
    refusal_to_apply,
    review_status,
)
from flagstaff_server.domain.approval_settings import ApprovalSettings
from flagstaff_server.errors import ValidationError

NOW = 1_000_000


def reviews(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"reviewerId": who, "kind": kind} for who, kind in pairs]


def test_each_reviewer_counts_once_with_their_latest_decision() -> None:
    two = ApprovalSettings(min_num_approvals=2)
    assert review_status(reviews(("bob", "approve"), ("bob", "approve")), two) == "pending"
    assert review_status(reviews(("bob", "approve"), ("eve", "approve")), two) == "approved"
    assert review_status(reviews(("bob", "decline"), ("bob", "approve")), ApprovalSettings()) == (
        "approved"
    )
    assert review_status(reviews(("bob", "approve"), ("eve", "decline")), two) == "declined"
    assert review_status(reviews(("bob", "comment")), ApprovalSettings()) == "pending"


def test_a_decline_blocks_only_where_declined_changes_may_not_be_applied() -> None:
    declined = reviews(("bob", "approve"), ("eve", "decline"))
    assert refusal_to_apply(declined, ApprovalSettings()) is None
    refusal = refusal_to_apply(declined, ApprovalSettings(can_apply_declined_changes=False))
    assert refusal is not None
    assert "canApplyDeclinedChanges" in refusal
    too_few = refusal_to_apply(reviews(("eve", "decline")), ApprovalSettings())
    assert too_few is not None
    assert "0 approval(s) of the 1" in too_few


def test_the_filter_reads_launchdarklys_terms() -> None:
    filters = parse_filter('status anyOf ["pending", "scheduled"], resourceKind equals flag')
    assert filters == {
        "status": frozenset({"pending", "scheduled"}),
        "resourceKind": frozenset({"flag"}),
    }
    assert passes(filters, {"status": ["pending"], "resourceKind": ["flag"]})
    assert not passes(filters, {"status": ["completed"], "resourceKind": ["flag"]})
    assert parse_filter(None) == {}
    for bad in ("colour equals red", "status is pending", "status anyOf pending"):
        with pytest.raises(ValidationError) as raised:
            parse_filter(bad)
        assert raised.value.path == "filter"


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"instructions": [{"kind": "turnFlagOn"}]}, "/description"),
        ({"description": " ", "instructions": [{"kind": "turnFlagOn"}]}, "/description"),
        ({"description": "x", "instructions": []}, "/instructions"),
        (
            {"description": "x", "instructions": [{"kind": "turnFlagOn"}], "executionDate": 5},
            "/executionDate",
        ),
        (
            {"description": "x", "instructions": [{"kind": "turnFlagOn"}], "notifyMemberIds": [1]},
            "/notifyMemberIds",
        ),
    ],
)
def test_bad_bodies_name_their_field(body: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as raised:
        parse_request_body(body, now_ms=NOW)
    assert raised.value.path == path


def test_reviews_edits_and_resource_ids() -> None:
    assert parse_review_body({"kind": "approve"}) == ("approve", None)
    with pytest.raises(ValidationError):
        parse_review_body({"kind": "comment", "comment": "  "})
    edit = parse_request_patch(
        {"instructions": [{"kind": "updateApprovalRequestDescription", "value": "d"}]}, now_ms=NOW
    )
    assert (edit.description, edit.voids_reviews) == ("d", False)
    assert parse_request_patch(
        {"instructions": [{"kind": "updateApprovalRequestExecutionDate", "value": None}]},
        now_ms=NOW,
    ).voids_reviews
    found = parse_resource_id("proj/p:env/production:segment/beta")
    assert (found.kind, found.project, found.environment, found.key) == (
        "segment",
        "p",
        "production",
        "beta",
    )
    with pytest.raises(ValidationError):
        parse_resource_id("proj/p:flag/f")


def flag(on: bool, rules: list[dict[str, Any]], name: str = "F") -> dict[str, Any]:
    return {"name": name, "_version": 1, "environments": {"production": {"on": on, "rules": rules}}}


def test_only_the_parts_the_instructions_touch_go_stale() -> None:
    base = flag(False, [{"_id": "r1", "clauses": []}, {"_id": "r2", "clauses": []}])
    instructions = [
        {"kind": "turnFlagOn"},
        {"kind": "updateRuleDescription", "ruleId": "r1", "description": "d"},
    ]
    renamed = flag(False, base["environments"]["production"]["rules"], name="G")
    assert stale_parts("flag", base, renamed, instructions, "production") == []
    other_rule = flag(False, [{"_id": "r1", "clauses": []}, {"_id": "r2", "clauses": [{}]}])
    assert stale_parts("flag", base, other_rule, instructions, "production") == []
    same_rule = flag(True, [{"_id": "r1", "clauses": [{}]}, {"_id": "r2", "clauses": []}])
    assert stale_parts("flag", base, same_rule, instructions, "production") == [
        (0, "env/production/on"),
        (1, "env/production/rules/r1"),
    ]
    segment = {"included": ["a"], "rules": [], "version": 1}
    grown = {**segment, "rules": [{}], "version": 2}
    include = [{"kind": "addIncludedUsers", "values": ["b"]}]
    assert stale_parts("segment", segment, grown, include, "production") == []
    assert stale_parts("segment", segment, grown, [{"kind": "addRule"}], "production") == [
        (0, "rules")
    ]
