"""What each management API route needs, in LaunchDarkly's action names: the action and the
resource template (path parameters in braces) a token's policy is asked about. Every route is
listed; a test walks the OpenAPI document and fails for one that is not (docs/access.md).

- `Needs(action, resource)`: the route's one check, made by `access.require` before the handler.
- `FROM_BODY`: the handler asks about what the body implies (a flag or segment patch needs every
  action its instructions or paths imply).
- `SIGNED_IN`: account-wide reading (lists of projects, the audit log): LaunchDarkly has no action
  for it, so any authenticated caller may.
- `PUBLIC`: the session routes, which sign in and out (single sign-on's too), and accepting an
  invitation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flagstaff_server.domain.policy_catalog import METRIC_ACTIONS


@dataclass(frozen=True, slots=True)
class Needs:
    action: str
    resource: str
    more: tuple[str, ...] = ()
    """Further actions on the same resource, all needed (a JSON Patch whose fields are not read
    here needs every update action of its resource)."""

    @property
    def actions(self) -> tuple[str, ...]:
        return (self.action, *self.more)


@dataclass(frozen=True, slots=True)
class Marker:
    name: str


FROM_BODY = Marker("from the body")
SIGNED_IN = Marker("any signed-in caller")
PUBLIC = Marker("public")
RouteAction = Needs | Marker

P = "proj/{projectKey}"
E = f"{P}:env/{{environmentKey}}"
FLAG = f"{P}:env/*:flag/{{featureFlagKey}}"
FLAG_IN_ENV = f"{E}:flag/{{featureFlagKey}}"
SEGMENT = f"{E}:segment/{{segmentKey}}"
API = "/api/v2"
SCHEDULED = (
    f"{API}/projects/{{projectKey}}/flags/{{featureFlagKey}}/environments/{{environmentKey}}"
)
TRIGGERS = f"{API}/flags/{{projectKey}}/{{featureFlagKey}}/triggers/{{environmentKey}}"
INSIGHTS = f"{API}/insights/{{projectKey}}/{{environmentKey}}"
FLAG_APPROVALS = f"{SCHEDULED}/approval-requests"
APPROVALS = f"{API}/approval-requests"
EVERY_FLAG = "proj/*:env/*:flag/*"
INTEGRATIONS = f"{API}/projects/{{projectKey}}/integrations/{{integrationKey}}"
INTEGRATION = f"{P}:integration/{{id}}"
"""A project's chat integration: LaunchDarkly names no action for it, so a change asks for the
webhook action of the same kind on the integration's own resource."""
METRIC = f"{P}:metric/{{metricKey}}"
ROLE = "role/{customRoleKey}"
EXPERIMENTS = f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}/experiments"
EXPERIMENT = f"{E}:experiment/{{experimentKey}}"
CODE_REFS = f"{API}/code-refs/repositories"
REPOSITORY = "code-reference-repository/{repo}"
METRIC_UPDATES = tuple(sorted(METRIC_ACTIONS - {"createMetric", "deleteMetric"}))
"""Where the path does not name the flag (`/approval-requests/{id}`): the action must be allowed
on every flag, which over-asks rather than under-asks."""


def view(resource: str = P) -> Needs:
    return Needs("viewProject", resource)


ROUTE_ACTIONS: Mapping[tuple[str, str], RouteAction] = {
    ("GET", f"{API}/projects"): SIGNED_IN,
    ("GET", f"{API}/caller/permissions"): SIGNED_IN,
    ("POST", f"{API}/projects"): Needs("createProject", "proj/*"),
    ("GET", f"{API}/projects/{{projectKey}}"): view(),
    ("PATCH", f"{API}/projects/{{projectKey}}"): Needs("updateProjectName", P),
    ("DELETE", f"{API}/projects/{{projectKey}}"): Needs("deleteProject", P),
    ("GET", f"{API}/projects/{{projectKey}}/environments"): view(),
    ("POST", f"{API}/projects/{{projectKey}}/environments"): Needs(
        "createEnvironment", f"{P}:env/*"
    ),
    ("GET", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}"): view(),
    ("PATCH", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}"): Needs(
        "updateName", E
    ),
    ("DELETE", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}"): Needs(
        "deleteEnvironment", E
    ),
    ("POST", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}/apiKey"): Needs(
        "updateApiKey", E
    ),
    ("POST", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}/mobileKey"): Needs(
        "updateMobileKey", E
    ),
    ("GET", f"{API}/flags/{{projectKey}}"): view(),
    ("POST", f"{API}/flags/{{projectKey}}"): Needs("createFlag", f"{P}:env/*:flag/*"),
    ("GET", f"{API}/flags/{{projectKey}}/{{featureFlagKey}}"): view(),
    ("PATCH", f"{API}/flags/{{projectKey}}/{{featureFlagKey}}"): FROM_BODY,
    ("DELETE", f"{API}/flags/{{projectKey}}/{{featureFlagKey}}"): Needs("deleteFlag", FLAG),
    ("POST", f"{API}/flags/{{projectKey}}/{{featureFlagKey}}/copy"): Needs(
        "copyFlagConfigTo", FLAG
    ),
    ("GET", TRIGGERS): view(),
    ("POST", TRIGGERS): Needs("createTriggers", FLAG_IN_ENV),
    ("GET", f"{TRIGGERS}/{{id}}"): view(),
    ("PATCH", f"{TRIGGERS}/{{id}}"): Needs("updateTriggers", FLAG_IN_ENV),
    ("DELETE", f"{TRIGGERS}/{{id}}"): Needs("deleteTriggers", FLAG_IN_ENV),
    ("GET", f"{SCHEDULED}/scheduled-changes"): view(),
    ("GET", f"{SCHEDULED}/automated-releases"): view(),
    ("POST", f"{SCHEDULED}/scheduled-changes"): Needs("updateScheduledChanges", FLAG_IN_ENV),
    ("GET", f"{SCHEDULED}/scheduled-changes/{{id}}"): view(),
    ("PATCH", f"{SCHEDULED}/scheduled-changes/{{id}}"): Needs(
        "updateScheduledChanges", FLAG_IN_ENV
    ),
    ("DELETE", f"{SCHEDULED}/scheduled-changes/{{id}}"): Needs(
        "updateScheduledChanges", FLAG_IN_ENV
    ),
    ("GET", FLAG_APPROVALS): view(),
    ("POST", FLAG_APPROVALS): Needs("createApprovalRequest", FLAG_IN_ENV),
    ("GET", f"{FLAG_APPROVALS}/{{id}}"): view(),
    ("PATCH", f"{FLAG_APPROVALS}/{{id}}"): Needs("updateApprovalRequest", FLAG_IN_ENV),
    ("DELETE", f"{FLAG_APPROVALS}/{{id}}"): Needs("deleteApprovalRequest", FLAG_IN_ENV),
    ("POST", f"{FLAG_APPROVALS}/{{id}}/reviews"): Needs("reviewApprovalRequest", FLAG_IN_ENV),
    ("POST", f"{FLAG_APPROVALS}/{{id}}/apply"): Needs("applyApprovalRequest", FLAG_IN_ENV),
    ("GET", APPROVALS): SIGNED_IN,
    ("POST", APPROVALS): Needs("createApprovalRequest", EVERY_FLAG),
    ("GET", f"{APPROVALS}/{{id}}"): SIGNED_IN,
    ("PATCH", f"{APPROVALS}/{{id}}"): Needs("updateApprovalRequest", EVERY_FLAG),
    ("DELETE", f"{APPROVALS}/{{id}}"): Needs("deleteApprovalRequest", EVERY_FLAG),
    ("POST", f"{APPROVALS}/{{id}}/reviews"): Needs("reviewApprovalRequest", EVERY_FLAG),
    ("POST", f"{APPROVALS}/{{id}}/apply"): Needs("applyApprovalRequest", EVERY_FLAG),
    ("GET", f"{API}/metrics/{{projectKey}}"): view(),
    ("POST", f"{API}/metrics/{{projectKey}}"): Needs("createMetric", f"{P}:metric/*"),
    ("GET", f"{API}/metrics/{{projectKey}}/{{metricKey}}"): view(),
    ("PATCH", f"{API}/metrics/{{projectKey}}/{{metricKey}}"): Needs(
        METRIC_UPDATES[0], METRIC, METRIC_UPDATES[1:]
    ),
    ("DELETE", f"{API}/metrics/{{projectKey}}/{{metricKey}}"): Needs("deleteMetric", METRIC),
    ("GET", EXPERIMENTS): view(),
    ("POST", EXPERIMENTS): Needs("createExperiment", f"{E}:experiment/*"),
    ("GET", f"{EXPERIMENTS}/{{experimentKey}}"): view(),
    ("PATCH", f"{EXPERIMENTS}/{{experimentKey}}"): Needs("updateExperiment", EXPERIMENT),
    ("POST", f"{EXPERIMENTS}/{{experimentKey}}/iterations"): Needs("updateExperiment", EXPERIMENT),
    ("GET", f"{EXPERIMENTS}/{{experimentKey}}/metrics/{{metricKey}}/results"): view(),
    ("GET", f"{EXPERIMENTS}/{{experimentKey}}/exposures"): view(),
    ("GET", CODE_REFS): SIGNED_IN,
    ("POST", CODE_REFS): Needs("createCodeRefsRepository", "code-reference-repository/*"),
    ("GET", f"{CODE_REFS}/{{repo}}"): SIGNED_IN,
    ("PATCH", f"{CODE_REFS}/{{repo}}"): Needs(
        "updateCodeRefsRepositoryConfiguration", REPOSITORY, ("updateCodeRefsRepositoryOn",)
    ),
    ("DELETE", f"{CODE_REFS}/{{repo}}"): Needs("deleteCodeRefsRepository", REPOSITORY),
    ("GET", f"{CODE_REFS}/{{repo}}/branches"): SIGNED_IN,
    ("POST", f"{CODE_REFS}/{{repo}}/branch-delete-tasks"): Needs(
        "updateCodeRefsRepositoryBranches", REPOSITORY
    ),
    ("GET", f"{CODE_REFS}/{{repo}}/branches/{{branch}}"): SIGNED_IN,
    ("PUT", f"{CODE_REFS}/{{repo}}/branches/{{branch}}"): Needs(
        "updateCodeRefsRepositoryBranches", REPOSITORY
    ),
    ("POST", f"{CODE_REFS}/{{repo}}/branches/{{branch}}/extinction-events"): Needs(
        "updateCodeRefsRepositoryBranches", REPOSITORY
    ),
    ("GET", f"{API}/code-refs/extinctions"): SIGNED_IN,
    ("GET", f"{API}/code-refs/statistics/{{projectKey}}"): view(),
    ("GET", f"{API}/code-refs/usage/{{projectKey}}/{{featureFlagKey}}"): view(),
    ("GET", f"{API}/segments/{{projectKey}}/{{environmentKey}}"): view(),
    ("POST", f"{API}/segments/{{projectKey}}/{{environmentKey}}"): Needs(
        "createSegment", f"{E}:segment/*"
    ),
    ("GET", f"{API}/segments/{{projectKey}}/{{environmentKey}}/{{segmentKey}}"): view(),
    ("PATCH", f"{API}/segments/{{projectKey}}/{{environmentKey}}/{{segmentKey}}"): FROM_BODY,
    ("DELETE", f"{API}/segments/{{projectKey}}/{{environmentKey}}/{{segmentKey}}"): Needs(
        "deleteSegment", SEGMENT
    ),
    ("POST", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}/import"): Needs(
        "createFlag", f"{E}:flag/*"
    ),
    ("GET", f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}/export"): view(),
    (
        "POST",
        f"{API}/projects/{{projectKey}}/environments/{{environmentKey}}/flags/evaluate",
    ): view(),
    ("GET", f"{API}/tokens"): Needs("createAccessToken", "member/*:token/*"),
    ("POST", f"{API}/tokens"): Needs("createAccessToken", "member/*:token/*"),
    ("POST", f"{API}/scim/tokens"): Needs("createAccessToken", "member/*:token/*"),
    ("GET", f"{API}/tokens/{{tokenId}}"): Needs("createAccessToken", "member/*:token/{tokenId}"),
    ("DELETE", f"{API}/tokens/{{tokenId}}"): Needs("deleteAccessToken", "member/*:token/{tokenId}"),
    ("GET", f"{API}/auditlog"): SIGNED_IN,
    ("GET", f"{API}/auditlog/{{entryId}}"): SIGNED_IN,
    ("GET", f"{API}/session"): PUBLIC,
    ("POST", f"{API}/session"): PUBLIC,
    ("DELETE", f"{API}/session"): PUBLIC,
    ("GET", f"{API}/session/status"): PUBLIC,
    ("GET", f"{API}/session/sso"): PUBLIC,
    ("GET", f"{API}/session/sso/start"): PUBLIC,
    ("GET", f"{API}/session/sso/callback"): PUBLIC,
    ("GET", f"{API}/sso/settings"): Needs("viewSsoSettings", "acct"),
    ("PUT", f"{API}/sso/settings"): Needs("updateSsoSettings", "acct"),
    ("GET", f"{API}/accounts"): Needs("createMember", "member/*"),
    ("POST", f"{API}/accounts"): Needs("createMember", "member/*"),
    ("POST", f"{API}/accounts/{{accountId}}"): Needs("updateRole", "member/{accountId}"),
    ("DELETE", f"{API}/accounts/{{accountId}}"): Needs("deleteMember", "member/{accountId}"),
    ("GET", f"{API}/roles"): SIGNED_IN,
    ("POST", f"{API}/roles"): Needs("createRole", "role/*"),
    ("GET", f"{API}/roles/{{customRoleKey}}"): SIGNED_IN,
    ("PATCH", f"{API}/roles/{{customRoleKey}}"): Needs(
        "updatePolicy", ROLE, ("updateName", "updateDescription", "updateBasePermissions")
    ),
    ("DELETE", f"{API}/roles/{{customRoleKey}}"): Needs("deleteRole", ROLE),
    ("GET", f"{API}/members"): SIGNED_IN,
    ("POST", f"{API}/members"): Needs("createMember", "member/*"),
    ("POST", f"{API}/members/invitations"): PUBLIC,
    ("PATCH", f"{API}/members/me/profile"): SIGNED_IN,
    ("POST", f"{API}/members/me/password"): SIGNED_IN,
    ("GET", f"{API}/members/me/tokens"): SIGNED_IN,
    ("GET", f"{API}/members/{{id}}"): SIGNED_IN,
    ("PATCH", f"{API}/members/{{id}}"): Needs("updateRole", "member/{id}", ("updateCustomRole",)),
    ("DELETE", f"{API}/members/{{id}}"): Needs("deleteMember", "member/{id}"),
    ("GET", f"{API}/teams"): SIGNED_IN,
    ("POST", f"{API}/teams"): Needs("createTeam", "team/*"),
    ("GET", f"{API}/teams/{{teamKey}}"): Needs("viewTeam", "team/{teamKey}"),
    ("PATCH", f"{API}/teams/{{teamKey}}"): FROM_BODY,
    ("DELETE", f"{API}/teams/{{teamKey}}"): Needs("deleteTeam", "team/{teamKey}"),
    ("GET", f"{API}/status/notices"): SIGNED_IN,
    ("POST", f"{API}/status/notices"): Needs("createNotice", "notice/*"),
    ("GET", f"{API}/status/notices/{{noticeId}}"): SIGNED_IN,
    ("DELETE", f"{API}/status/notices/{{noticeId}}"): Needs("deleteNotice", "notice/{noticeId}"),
    ("GET", f"{API}/webhooks"): SIGNED_IN,
    ("POST", f"{API}/webhooks"): Needs("createWebhook", "webhook/*"),
    ("GET", f"{API}/webhooks/{{id}}"): SIGNED_IN,
    ("PATCH", f"{API}/webhooks/{{id}}"): Needs("updateStatements", "webhook/{id}"),
    ("DELETE", f"{API}/webhooks/{{id}}"): Needs("deleteWebhook", "webhook/{id}"),
    ("GET", f"{API}/webhooks/{{id}}/deliveries"): SIGNED_IN,
    ("GET", f"{API}/webhooks/{{id}}/deliveries/{{deliveryId}}"): SIGNED_IN,
    ("GET", INTEGRATIONS): view(),
    ("POST", INTEGRATIONS): Needs("createWebhook", f"{P}:integration/*"),
    ("GET", f"{INTEGRATIONS}/{{id}}"): view(),
    ("PATCH", f"{INTEGRATIONS}/{{id}}"): Needs("updateStatements", INTEGRATION),
    ("DELETE", f"{INTEGRATIONS}/{{id}}"): Needs("deleteWebhook", INTEGRATION),
    ("GET", f"{INTEGRATIONS}/{{id}}/deliveries"): view(),
    ("GET", f"{INSIGHTS}/flags/{{flagKey}}/evaluations"): view(),
    ("GET", f"{INSIGHTS}/flag-statuses"): view(),
    ("GET", f"{INSIGHTS}/sdk-instances"): view(),
    ("GET", f"{INSIGHTS}/contexts"): view(),
    ("GET", f"{INSIGHTS}/contexts/{{contextKind}}/{{contextKey}}"): view(),
    ("GET", f"{INSIGHTS}/metrics/{{eventKey}}"): view(),
    ("GET", f"{INSIGHTS}/events"): view(),
    ("GET", f"{INSIGHTS}/quarantine"): view(),
    ("GET", f"{INSIGHTS}/quarantine/export"): view(),
    ("POST", f"{INSIGHTS}/quarantine/reprocess"): Needs("importEventData", E),
}


def resource_text(template: str, params: Mapping[str, str]) -> str:
    """The template with each `{name}` replaced by that path parameter ('*' when absent)."""
    text = template
    for name, value in params.items():
        text = text.replace(f"{{{name}}}", value)
    return text
