"""Pydantic models of the platform endpoints' bodies (projects, environments, tokens, audit log):
they validate requests at the edge and describe responses in the OpenAPI document. Field names are
LaunchDarkly's; the rules behind the values live in `services.field`, not here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class Request(BaseModel):
    # Strict: `"true"` is not a boolean and `1.5` not a TTL. Unknown fields are refused (400
    # naming the field), so a misspelt one is not dropped silently; LaunchDarkly's own fields
    # that Flagstaff does not implement are declared below as `Ignored`, so scripts written for
    # LaunchDarkly still work.
    model_config = ConfigDict(strict=True, extra="forbid", alias_generator=to_camel)


Ignored = Any
"""A LaunchDarkly field accepted in any form and ignored."""


class Response(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True, serialize_by_alias=True, extra="forbid", alias_generator=to_camel
    )


class Link(Response):
    href: str
    type: str


Links = dict[str, Link]


class ClientSideAvailability(Request):
    using_mobile_key: bool = False
    using_environment_id: bool = False


class ClientSideAvailabilityOut(Response):
    using_mobile_key: bool
    using_environment_id: bool


class EnvironmentPost(Request):
    key: str
    name: str
    color: str | None = None
    default_ttl: int | None = None
    secure_mode: bool | None = None
    default_track_events: bool | None = None
    confirm_changes: bool | None = None
    require_comments: bool | None = None
    tags: list[str] | None = None
    critical: bool | None = None
    source: Ignored = None


class ProjectPost(Request):
    key: str
    name: str
    tags: list[str] | None = None
    description: str | None = None
    include_in_snippet_by_default: bool | None = None
    default_client_side_availability: ClientSideAvailability | None = None
    environments: list[EnvironmentPost] | None = None
    naming_convention: Ignored = None


class TokenPost(Request):
    name: str
    role: Literal["reader", "writer", "admin"] | None = Field(
        default=None,
        description="Required unless `inlineRole` or `customRoleIds` is given; with them, the "
        "ceiling of the token (the creator's role when omitted)",
    )
    description: str | None = None
    project_key: str | None = None
    environment_key: str | None = None
    bypass_approvals: bool | None = Field(
        default=None,
        description="Flagstaff's addition: the token may change environments that require "
        "approval without an approval request (admin tokens may anyway)",
    )
    custom_role_ids: list[Any] | None = Field(
        default=None,
        description="Custom roles the token carries (their `_id`s, or keys); with `inlineRole` "
        "the most permissive of them wins, within `role` (docs/access.md)",
    )
    inline_role: list[Any] | None = Field(
        default=None,
        description="A policy the token carries (LaunchDarkly statements); every request is "
        "decided by it (docs/access.md)",
    )
    service_token: Ignored = None
    default_api_version: Ignored = None
    expiry: Ignored = None


class ApprovalSettings(Response):
    """LaunchDarkly's `ApprovalSettings` (docs/workflows.md, "Approval settings")."""

    required: bool
    bypass_approvals_for_pending_changes: bool
    min_num_approvals: int
    can_review_own_request: bool
    can_apply_declined_changes: bool
    auto_apply_approved_changes: bool
    service_kind: str
    service_config: dict[str, Any]
    required_approval_tags: list[str]
    service_kind_configuration_id: str | None = None


class Environment(Response):
    links: Links = Field(alias="_links")
    id: str = Field(alias="_id", description="The client-side id (24 hex digits)")
    key: str
    name: str
    api_key: str = Field(description="The SDK key")
    mobile_key: str
    color: str
    default_ttl: int
    secure_mode: bool
    default_track_events: bool
    require_comments: bool
    confirm_changes: bool
    tags: list[str]
    critical: bool
    approval_settings: ApprovalSettings = Field(description="Approvals for flag changes")
    resource_approval_settings: dict[str, ApprovalSettings] = Field(
        description="Approvals for other resources, by kind (`segment`)"
    )


class Environments(Response):
    links: Links = Field(alias="_links")
    total_count: int
    items: list[Environment]


class ProjectFields(Response):
    links: Links = Field(alias="_links")
    id: str = Field(alias="_id")
    key: str
    include_in_snippet_by_default: bool
    default_client_side_availability: ClientSideAvailabilityOut
    name: str
    description: str
    tags: list[str]


class Project(ProjectFields):
    environments: Environments | None = Field(
        default=None, description="Present with `?expand=environments`"
    )


class ProjectRep(ProjectFields):
    """The answer to a project's creation: its environments in full."""

    environments: list[Environment]


class Projects(Response):
    links: Links = Field(alias="_links")
    items: list[Project]
    total_count: int


class Token(Response):
    id: str = Field(alias="_id")
    owner_id: str
    member_id: str
    name: str
    description: str
    creation_date: int
    last_modified: int
    role: Literal["reader", "writer", "admin"]
    token: str = Field(
        description="The whole secret in the answer to a creation, else its last four characters"
    )
    service_token: bool
    project_key: str | None
    environment_key: str | None
    bypass_approvals: bool
    inline_role: list[dict[str, Any]] | None = Field(
        default=None, description="The policy the token carries, when it was given one"
    )
    custom_role_ids: list[str] | None = Field(
        default=None, description="The custom roles the token carries, when it was given some"
    )
    links: Links = Field(alias="_links")


class Tokens(Response):
    links: Links = Field(alias="_links")
    items: list[Token]
    total_count: int


class NoticePost(Request):
    title: str = Field(description="One line, shown as the notice's heading")
    message: str | None = Field(default=None, description="What to do about it")
    severity: Literal["info", "warning", "critical"] | None = None
    regions: list[str] | None = Field(
        default=None, description="The regions it concerns (FLAGSTAFF_REGION names); none: all"
    )
    expires_at: int | None = Field(
        default=None, description="Epoch milliseconds after which it is no longer shown"
    )


class Notice(Response):
    links: Links = Field(alias="_links")
    id: str = Field(alias="_id")
    title: str
    message: str
    severity: Literal["info", "warning", "critical"]
    regions: list[str]
    creation_date: int
    expires_at: int | None
    source: Literal["api", "signed"] = Field(alias="_source")


class Notices(Response):
    links: Links = Field(alias="_links")
    items: list[Notice]
    total_count: int


class ResourceAccess(Response):
    action: str
    resource: str


class TokenSummary(Response):
    id: str = Field(alias="_id")
    name: str


class Target(Response):
    name: str
    resources: list[str]


class Delta(Response):
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    patch: Any = Field(description="The JSON Patch, merge patch or semantic patch applied")


class AuditLogEntry(Response):
    links: Links = Field(alias="_links")
    id: str = Field(alias="_id")
    account_id: str = Field(alias="_accountId")
    date: int = Field(description="Epoch milliseconds")
    accesses: list[ResourceAccess]
    kind: str
    name: str
    description: str
    short_description: str
    comment: str | None
    token: TokenSummary
    title_verb: str
    title: str
    target: Target
    delta: Delta = Field(
        description="The documents before and after the change and the request; LaunchDarkly's "
        "`previousVersion`/`currentVersion` are left out, as they would repeat them"
    )


class AuditLog(Response):
    links: Links = Field(alias="_links")
    items: list[AuditLogEntry]
    total_count: int


class Problem(Response):
    """An error (RFC 9457 problem details, plus LaunchDarkly's `code` and `message`)."""

    model_config = ConfigDict(
        populate_by_name=True, serialize_by_alias=True, extra="allow", alias_generator=to_camel
    )
    code: str
    message: str
    path: str | None = Field(
        default=None, description="JSON pointer (or parameter name) of the offending value"
    )
    action: str | None = Field(
        default=None, description="On a 403 from a policy: the LaunchDarkly action refused"
    )
    resource: str | None = Field(
        default=None, description="On a 403 from a policy: the resource it was refused on"
    )
    type: str
    title: str
    status: int
    detail: str
