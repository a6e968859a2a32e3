"""An environment's approval settings in LaunchDarkly's `ApprovalSettings` shape: reading and
checking them (each problem a `ValidationError` at its JSON pointer) and the rules they state:
which changes need approval, how many approvals a request needs, who may review it. Pure.

Flags follow the environment's `approvalSettings`; segments its `resourceApprovalSettings.segment`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from flagstaff_server.domain.document import pointer
from flagstaff_server.errors import ValidationError

ResourceKind = Literal["flag", "segment"]

MIN_APPROVALS = 1
MAX_APPROVALS = 5
SERVICE_KIND = "launchdarkly"
"""The only approval service: the requests kept by Flagstaff itself. LaunchDarkly's name for its
own is kept, so settings read from LaunchDarkly round-trip."""
RESOURCE_KINDS: tuple[ResourceKind, ...] = ("segment",)
"""The keys of `resourceApprovalSettings` (flags have `approvalSettings` itself)."""

TAG_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")

DEFAULTS: Mapping[str, Any] = {
    "required": False,
    "bypassApprovalsForPendingChanges": False,
    "minNumApprovals": 1,
    "canReviewOwnRequest": False,
    "canApplyDeclinedChanges": True,
    "autoApplyApprovedChanges": False,
    "serviceKind": SERVICE_KIND,
    "serviceConfig": {},
    "requiredApprovalTags": [],
}
"""LaunchDarkly's defaults: what an environment that never configured approvals has."""
IGNORED = ("serviceKindConfigurationId",)
"""Accepted and kept, with no effect here (a custom approval integration's id)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalSettings:
    required: bool = False
    """Every flag (or segment) in the environment needs an approved request to change."""
    required_approval_tags: tuple[str, ...] = ()
    """Otherwise only those with one of these tags do (LaunchDarkly: not both at once)."""
    min_num_approvals: int = 1
    can_review_own_request: bool = False
    can_apply_declined_changes: bool = True
    """A request with declines may still be applied once it has `min_num_approvals` approvals."""

    def applies_to(self, tags: Collection[str]) -> bool:
        """Whether a change to a resource carrying `tags` needs approval."""
        if self.required:
            return True
        return any(tag in tags for tag in self.required_approval_tags)


def check_approval_settings(value: Any, path: str) -> dict[str, Any]:
    """The settings object with LaunchDarkly's defaults filled in for absent fields."""
    if not isinstance(value, dict):
        raise ValidationError("approval settings must be an object", path=path)
    settings: dict[str, Any] = {**DEFAULTS, "serviceConfig": {}, "requiredApprovalTags": []}
    for name, given in value.items():
        at = path + pointer(name)
        if name in IGNORED:
            if given is not None and not isinstance(given, str):
                raise ValidationError(f"{name} must be a string", path=at)
            settings[name] = given
        elif name not in DEFAULTS:
            raise ValidationError(f"unknown approval setting {name!r}", path=at)
        elif name == "minNumApprovals":
            settings[name] = check_count(given, at)
        elif name == "serviceKind":
            if given != SERVICE_KIND:
                raise ValidationError(
                    f"serviceKind must be {SERVICE_KIND!r}: approvals are kept by Flagstaff "
                    "itself (no external approval service)",
                    path=at,
                )
        elif name == "serviceConfig":
            if not isinstance(given, dict):
                raise ValidationError("serviceConfig must be an object", path=at)
            settings[name] = given
        elif name == "requiredApprovalTags":
            settings[name] = check_tags(given, at)
        elif not isinstance(given, bool):
            raise ValidationError(f"{name} must be true or false", path=at)
        else:
            settings[name] = given
    if settings["required"] and settings["requiredApprovalTags"]:
        raise ValidationError(
            "set either required (every flag needs approval) or requiredApprovalTags (flags "
            "with one of these tags do), not both",
            path=path + "/requiredApprovalTags",
        )
    return settings


def check_count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("minNumApprovals must be a whole number", path=path)
    if not MIN_APPROVALS <= value <= MAX_APPROVALS:
        raise ValidationError(
            f"minNumApprovals is from {MIN_APPROVALS} to {MAX_APPROVALS}, got {value}", path=path
        )
    return value


def check_tags(value: Any, path: str) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError("requiredApprovalTags must be an array of tags", path=path)
    for index, tag in enumerate(value):
        if not isinstance(tag, str) or not TAG_PATTERN.match(tag):
            raise ValidationError(
                "a tag is 1 to 64 letters, digits, '.', '_', ':' or '-'", path=f"{path}/{index}"
            )
    return sorted(set(value))


def check_resource_approval_settings(value: Any, path: str) -> dict[str, Any]:
    """`resourceApprovalSettings`: settings per resource kind other than flags (`segment`)."""
    if not isinstance(value, dict):
        raise ValidationError("resourceApprovalSettings must be an object", path=path)
    result: dict[str, Any] = {}
    for kind in RESOURCE_KINDS:
        result[kind] = check_approval_settings(value.get(kind, {}), f"{path}/{kind}")
    for kind in value:
        if kind not in RESOURCE_KINDS:
            raise ValidationError(
                f"approval settings exist for {', '.join(RESOURCE_KINDS)} (flags use "
                f"approvalSettings), not {kind!r}",
                path=path + pointer(kind),
            )
    return result


def default_settings() -> dict[str, Any]:
    return check_approval_settings({}, "")


def settings_json(environment_doc: Mapping[str, Any], kind: ResourceKind) -> dict[str, Any]:
    """The stored settings for `kind` in an environment's document, defaults filled in."""
    if kind == "flag":
        stored = environment_doc.get("approvalSettings")
    else:
        stored = environment_doc.get("resourceApprovalSettings", {}).get(kind)
    return {**default_settings(), **(stored or {})}


def settings_of(environment_doc: Mapping[str, Any], kind: ResourceKind) -> ApprovalSettings:
    stored = settings_json(environment_doc, kind)
    return ApprovalSettings(
        required=bool(stored["required"]),
        required_approval_tags=tuple(stored["requiredApprovalTags"]),
        min_num_approvals=int(stored["minNumApprovals"]),
        can_review_own_request=bool(stored["canReviewOwnRequest"]),
        can_apply_declined_changes=bool(stored["canApplyDeclinedChanges"]),
    )


__all__ = [
    "MAX_APPROVALS",
    "ApprovalSettings",
    "ResourceKind",
    "check_approval_settings",
    "check_resource_approval_settings",
    "default_settings",
    "settings_json",
    "settings_of",
]
