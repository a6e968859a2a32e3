"""What LaunchDarkly's policy language can name: the resource types (as paths of nested types,
`proj` > `env` > `flag`) and the actions of each, as LaunchDarkly documents them, plus the
resource types Flagstaff's own audit entries use. Values only; `policy` checks against them."""

from __future__ import annotations

from collections.abc import Mapping

ResourcePath = tuple[str, ...]
"""The types of a specifier's parts, outermost first: `("proj", "env", "flag")`."""

FLAG_ACTIONS = frozenset(
    {
        "createFlag",
        "deleteFlag",
        "cloneFlag",
        "toggleFlag",
        "updateOn",
        "updateRules",
        "updateTargets",
        "updateFallthrough",
        "updateOffVariation",
        "updatePrerequisites",
        "updateExpiringTargets",
        "updateScheduledChanges",
        "updateFeatureWorkflows",
        "updateName",
        "updateDescription",
        "updateTags",
        "updateTemporary",
        "updateDeprecated",
        "updateGlobalArchived",
        "updateMaintainer",
        "updateFlagVariations",
        "updateFlagDefaultVariations",
        "updateFlagCustomProperties",
        "updateClientSideFlagAvailability",
        "updateIncludeInSnippet",
        "updateTrackEvents",
        "updateFlagSalt",
        "updateFlagRuleDescription",
        "copyFlagConfigFrom",
        "copyFlagConfigTo",
        "createTriggers",
        "updateTriggers",
        "deleteTriggers",
        "createApprovalRequest",
        "reviewApprovalRequest",
        "applyApprovalRequest",
        "updateApprovalRequest",
        "deleteApprovalRequest",
        "bypassRequiredApproval",
        "createFlagLink",
        "updateFlagLink",
        "deleteFlagLink",
        "manageFlagFollowers",
        "addReleasePipeline",
        "removeReleasePipeline",
        "replaceReleasePipeline",
        "updateReleasePhaseStatus",
        "updateFlagConfigMigrationSettings",
        "updateMeasuredRolloutConfiguration",
        "updateFallthroughWithMeasuredRollout",
        "updateRulesWithMeasuredRollout",
        "stopMeasuredRolloutOnFlagFallthrough",
        "stopMeasuredRolloutOnFlagRule",
    }
)

SEGMENT_ACTIONS = frozenset(
    {
        "createSegment",
        "deleteSegment",
        "updateName",
        "updateDescription",
        "updateTags",
        "updateIncluded",
        "updateExcluded",
        "updateRules",
        "updateExpiringTargets",
        "updateScheduledChanges",
        "createApprovalRequest",
        "reviewApprovalRequest",
        "applyApprovalRequest",
        "updateApprovalRequest",
        "deleteApprovalRequest",
    }
)

ENVIRONMENT_ACTIONS = frozenset(
    {
        "createEnvironment",
        "deleteEnvironment",
        "updateName",
        "updateColor",
        "updateTtl",
        "updateApiKey",
        "updateMobileKey",
        "viewSdkKey",
        "updateSecureMode",
        "updateDefaultTrackEvents",
        "updateRequireComments",
        "updateConfirmChanges",
        "updateApprovalSettings",
        "updateCritical",
        "updateTags",
        "deleteContextInstance",
        "importEventData",
    }
)

PROJECT_ACTIONS = frozenset(
    {
        "createProject",
        "deleteProject",
        "viewProject",
        "updateProjectName",
        "updateTags",
        "updateDefaultClientSideAvailability",
        "updateIncludeInSnippetByDefault",
        "updateProjectFlagDefaults",
        "updateDefaultReleasePipeline",
    }
)

METRIC_ACTIONS = frozenset(
    {
        "createMetric",
        "deleteMetric",
        "updateName",
        "updateDescription",
        "updateEventKey",
        "updateNumeric",
        "updateNumericSuccess",
        "updateNumericUnit",
        "updateUnitAggregationType",
        "updateRandomizationUnits",
        "updateSelector",
        "updateUrls",
        "updateEventDefault",
        "updateTags",
        "updateMaintainer",
        "updateOn",
    }
)

WEBHOOK_ACTIONS = frozenset(
    {
        "createWebhook",
        "deleteWebhook",
        "updateName",
        "updateOn",
        "updateQuery",
        "updateSecret",
        "updateStatements",
        "updateTags",
        "updateUrl",
    }
)

ACTIONS_BY_PATH: Mapping[ResourcePath, frozenset[str]] = {
    ("proj",): PROJECT_ACTIONS,
    ("proj", "env"): ENVIRONMENT_ACTIONS,
    ("proj", "env", "flag"): FLAG_ACTIONS,
    ("proj", "env", "segment"): SEGMENT_ACTIONS,
    ("proj", "env", "experiment"): frozenset(
        {"createExperiment", "updateExperiment", "updateExperimentArchived"}
    ),
    ("proj", "metric"): METRIC_ACTIONS,
    ("webhook",): WEBHOOK_ACTIONS,
    ("code-reference-repository",): frozenset(
        {
            "createCodeRefsRepository",
            "deleteCodeRefsRepository",
            "updateCodeRefsRepositoryBranches",
            "updateCodeRefsRepositoryConfiguration",
            "updateCodeRefsRepositoryName",
            "updateCodeRefsRepositoryOn",
        }
    ),
    ("role",): frozenset(
        {
            "createRole",
            "deleteRole",
            "updateName",
            "updateDescription",
            "updatePolicy",
            "updateBasePermissions",
            "updateMembers",
            "updateTokens",
        }
    ),
    ("team",): frozenset(
        {
            "createTeam",
            "deleteTeam",
            "viewTeam",
            "updateTeamName",
            "updateTeamDescription",
            "updateTeamMembers",
            "updateTeamCustomRoles",
            "updateTeamPermissionGrants",
        }
    ),
    ("member",): frozenset(
        {
            "createMember",
            "deleteMember",
            "updateRole",
            "updateCustomRole",
            "updateMemberRoleAttributes",
            "approveDomainMatchedMember",
            "sendMfaRecoveryCode",
            "sendMfaRequest",
        }
    ),
    ("member", "token"): frozenset({"createAccessToken", "deleteAccessToken"}),
    # Flagstaff's own: operator notices on the status page
    ("notice",): frozenset({"createNotice", "deleteNotice"}),
    # Flagstaff's own: the organisation's single sign-on settings (docs/sso.md)
    ("acct",): frozenset({"viewSsoSettings", "updateSsoSettings"}),
}

LAUNCHDARKLY_ACTIONS: frozenset[str] = frozenset().union(*ACTIONS_BY_PATH.values())
"""Every action LaunchDarkly documents for the types above (one name may serve several types:
`updateName`, `updateTags`, ...)."""

RESOURCE_PATHS: frozenset[ResourcePath] = frozenset(
    {
        *ACTIONS_BY_PATH,
        ("acct",),
        ("application",),
        ("domain-verification",),
        ("integration",),
        ("pending-request",),
        ("relay-proxy-config",),
        ("service-token",),
        ("template",),
        ("proj", "env", "holdout"),
        ("proj", "env", "destination"),
        ("proj", "metric-group"),
        ("proj", "layer"),
        ("proj", "release-pipeline"),
        ("proj", "context-kind"),
        ("proj", "aiconfig"),
        # Flagstaff's own resources in its audit log: access tokens, web UI accounts, operator
        # notices, and the chat integrations of a project
        ("token",),
        ("account",),
        ("notice",),
        ("proj", "integration"),
    }
)
"""The resource types a specifier may name: LaunchDarkly's, then Flagstaff's own."""

NAMELESS_TYPES = frozenset({"acct"})
"""Types written without `/name` (there is one account)."""
