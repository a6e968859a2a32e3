"""The official `launchdarkly-api` Python client against a running `flagstaff serve`: it creates a
project and a flag, patches targeting with JSON Patch and with semantic patch, reads the flag
back, schedules a change that the worker then applies, and makes a flag trigger and calls its
URL, and asks for, reviews and applies approval requests (one now, one as a scheduled change).
The client validates every response against LaunchDarkly's models, so a missing or
mistyped field in our shapes fails here."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import launchdarkly_api
import pytest
from launchdarkly_api.api.approvals_api import ApprovalsApi
from launchdarkly_api.api.contexts_api import ContextsApi
from launchdarkly_api.api.environments_api import EnvironmentsApi
from launchdarkly_api.api.feature_flags_api import FeatureFlagsApi
from launchdarkly_api.api.flag_triggers_api import FlagTriggersApi
from launchdarkly_api.api.projects_api import ProjectsApi
from launchdarkly_api.api.scheduled_changes_api import ScheduledChangesApi
from launchdarkly_api.api.segments_api import SegmentsApi
from launchdarkly_api.exceptions import ApiException
from launchdarkly_api.models.create_flag_config_approval_request_request import (
    CreateFlagConfigApprovalRequestRequest,
)
from launchdarkly_api.models.expandable_approval_requests_response import (
    ExpandableApprovalRequestsResponse,
)
from launchdarkly_api.models.feature_flag import FeatureFlag
from launchdarkly_api.models.feature_flag_body import FeatureFlagBody
from launchdarkly_api.models.feature_flag_scheduled_change import FeatureFlagScheduledChange
from launchdarkly_api.models.flag_config_approval_request_response import (
    FlagConfigApprovalRequestResponse,
)
from launchdarkly_api.models.flag_copy_config_environment import FlagCopyConfigEnvironment
from launchdarkly_api.models.flag_copy_config_post import FlagCopyConfigPost
from launchdarkly_api.models.flag_scheduled_changes_input import FlagScheduledChangesInput
from launchdarkly_api.models.flag_trigger_input import FlagTriggerInput
from launchdarkly_api.models.patch_operation import PatchOperation
from launchdarkly_api.models.patch_with_comment import PatchWithComment
from launchdarkly_api.models.post_approval_request_apply_request import (
    PostApprovalRequestApplyRequest,
)
from launchdarkly_api.models.post_approval_request_review_request import (
    PostApprovalRequestReviewRequest,
)
from launchdarkly_api.models.post_flag_scheduled_changes_input import (
    PostFlagScheduledChangesInput,
)
from launchdarkly_api.models.project_post import ProjectPost
from launchdarkly_api.models.segment_body import SegmentBody
from launchdarkly_api.models.trigger_post import TriggerPost
from launchdarkly_api.models.trigger_workflow_rep import TriggerWorkflowRep
from launchdarkly_api.models.variation import Variation
from support.deadlines import wait_until
from support.processes import ServeProcess, running

ADMIN_TOKEN = "e2e-admin-token"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
STARTUP_SECONDS = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`flagstaff serve` on a free port with a fresh SQLite data directory; yields its base URL."""
    process = ServeProcess(
        data_dir=tmp_path_factory.mktemp("flagstaff-e2e"),
        admin_token=ADMIN_TOKEN,
        start_timeout=STARTUP_SECONDS,
    )
    with running(process):
        yield process.url


@pytest.fixture(scope="module")
def client(server: str) -> Iterator[launchdarkly_api.ApiClient]:
    configuration = launchdarkly_api.Configuration(host=server)
    configuration.api_key["ApiKey"] = ADMIN_TOKEN
    with launchdarkly_api.ApiClient(configuration) as api_client:
        yield api_client


def semantic_patch(
    client: launchdarkly_api.ApiClient, path: str, body: dict[str, object], model: str
) -> object:
    """Send a semantic patch through the client's own transport, auth and deserialisation: its
    generated `patch_*` methods only accept JSON Patch bodies."""
    request = client.param_serialize(
        method="PATCH",
        resource_path=path,
        header_params={"Content-Type": SEMANTIC, "Accept": "application/json"},
        body=body,
        auth_settings=["ApiKey"],
    )
    response = client.call_api(*request)
    response.read()
    return client.response_deserialize(response, {"200": model}).data


def test_client_creates_patches_and_reads_a_flag(client: launchdarkly_api.ApiClient) -> None:
    project = ProjectsApi(client).post_project(ProjectPost(key="shop", name="Shop"))
    assert project.key == "shop"

    flags = FeatureFlagsApi(client)
    created = flags.post_feature_flag(
        "shop",
        FeatureFlagBody(
            key="checkout",
            name="New checkout",
            variations=[Variation(value=True, name="on"), Variation(value=False, name="off")],
            tags=["release"],
        ),
    )
    assert isinstance(created, FeatureFlag)
    assert created.version == 1
    assert created.environments is not None
    assert created.environments["production"].on is False

    patched = flags.patch_feature_flag(
        "shop",
        "checkout",
        PatchWithComment(
            comment="target the beta testers",
            patch=[
                PatchOperation(op="test", path="/_version", value=1),
                PatchOperation(op="replace", path="/environments/production/on", value=True),
                PatchOperation(
                    op="add",
                    path="/environments/production/targets/-",
                    value={"variation": 0, "values": ["beta-1", "beta-2"]},
                ),
            ],
        ),
    )
    assert patched.version == 2
    production = patched.environments["production"]  # type: ignore[index]
    assert production.on is True
    assert production.targets is not None
    assert production.targets[0].values == ["beta-1", "beta-2"]

    off_id = created.variations[1].id
    semantic = semantic_patch(
        client,
        "/api/v2/flags/shop/checkout",
        {
            "comment": "exclude one user, then add a rule",
            "environmentKey": "production",
            "instructions": [
                {"kind": "addTargets", "variationId": off_id, "values": ["grumpy"]},
                {
                    "kind": "addRule",
                    "variationId": off_id,
                    "clauses": [
                        {"attribute": "country", "op": "in", "values": ["FR"], "negate": False}
                    ],
                },
            ],
        },
        "FeatureFlag",
    )
    assert isinstance(semantic, FeatureFlag)
    assert semantic.version == 3

    read = flags.get_feature_flag("shop", "checkout", env="production")
    config = read.environments["production"]  # type: ignore[index]
    assert config.on is True
    assert config.targets is not None
    assert {(target.variation, tuple(target.values)) for target in config.targets} == {
        (0, ("beta-1", "beta-2")),
        (1, ("grumpy",)),
    }
    assert config.rules is not None
    assert config.rules[0].clauses[0].values == ["FR"]
    assert config.rules[0].variation == 1

    listed = flags.get_feature_flags("shop", tag="release")
    assert [flag.key for flag in listed.items] == ["checkout"]

    evaluations = ContextsApi(client).evaluate_context_instance(
        "shop", "production", {"kind": "user", "key": "grumpy"}
    )
    assert [(item.key, item.value) for item in evaluations.items] == [("checkout", False)]
    assert evaluations.items[0].reason is not None
    assert evaluations.items[0].reason.kind == "TARGET_MATCH"


def test_client_sees_version_conflicts_as_409(client: launchdarkly_api.ApiClient) -> None:
    ProjectsApi(client).post_project(ProjectPost(key="race", name="Race"))
    flags = FeatureFlagsApi(client)
    flags.post_feature_flag("race", FeatureFlagBody(key="f", name="F"))
    stale = PatchWithComment(
        patch=[
            PatchOperation(op="test", path="/_version", value=9),
            PatchOperation(op="replace", path="/description", value="late"),
        ]
    )
    with pytest.raises(ApiException) as raised:
        flags.patch_feature_flag("race", "f", stale)
    assert raised.value.status == 409


def test_client_creates_and_patches_a_segment(client: launchdarkly_api.ApiClient) -> None:
    ProjectsApi(client).post_project(ProjectPost(key="seg", name="Seg"))
    segments = SegmentsApi(client)
    created = segments.post_segment("seg", "production", SegmentBody(key="beta", name="Beta"))
    assert created.key == "beta"
    patched = segments.patch_segment(
        "seg",
        "production",
        "beta",
        PatchWithComment(patch=[PatchOperation(op="add", path="/included/-", value="u1")]),
    )
    assert patched.included == ["u1"]
    read = segments.get_segment("seg", "production", "beta")
    assert read.version == 2

    semantic = semantic_patch(
        client,
        "/api/v2/segments/seg/production/beta",
        {"instructions": [{"kind": "addExcludedUsers", "values": ["u2"]}]},
        "UserSegment",
    )
    assert semantic.excluded == ["u2"]  # type: ignore[attr-defined]
    listed = segments.get_segments("seg", "production")
    assert [(segment.key, segment.version) for segment in listed.items] == [("beta", 3)]
    segments.delete_segment("seg", "production", "beta")
    assert segments.get_segments("seg", "production").items == []


def test_client_deletes_a_flag(client: launchdarkly_api.ApiClient) -> None:
    ProjectsApi(client).post_project(ProjectPost(key="gone", name="Gone"))
    flags = FeatureFlagsApi(client)
    flags.post_feature_flag("gone", FeatureFlagBody(key="f", name="F"))
    flags.delete_feature_flag("gone", "f")
    with pytest.raises(ApiException) as raised:
        flags.get_feature_flag("gone", "f")
    assert raised.value.status == 404


def test_client_copies_a_configuration_between_environments(
    client: launchdarkly_api.ApiClient,
) -> None:
    ProjectsApi(client).post_project(ProjectPost(key="promo", name="Promo"))
    flags = FeatureFlagsApi(client)
    flags.post_feature_flag("promo", FeatureFlagBody(key="f", name="F"))
    flags.patch_feature_flag(
        "promo",
        "f",
        PatchWithComment(
            patch=[PatchOperation(op="replace", path="/environments/test/on", value=True)]
        ),
    )
    copied = flags.copy_feature_flag(
        "promo",
        "f",
        FlagCopyConfigPost(
            source=FlagCopyConfigEnvironment(key="test"),
            target=FlagCopyConfigEnvironment(key="production", current_version=1),
            included_actions=["updateOn"],
        ),
    )
    assert copied.environments is not None
    assert copied.environments["production"].on is True


def test_client_schedules_edits_and_lists_a_change_the_worker_then_runs(
    client: launchdarkly_api.ApiClient,
) -> None:
    """The `all` process runs the worker: a change due two seconds on is applied by it."""
    ProjectsApi(client).post_project(ProjectPost(key="sched", name="Sched"))
    flags = FeatureFlagsApi(client)
    flags.post_feature_flag("sched", FeatureFlagBody(key="launch", name="Launch"))
    schedules = ScheduledChangesApi(client)
    soon = int(time.time() * 1000) + 2_000
    created = schedules.post_flag_config_scheduled_changes(
        "sched",
        "launch",
        "production",
        PostFlagScheduledChangesInput(
            execution_date=soon + 60_000, instructions=[{"kind": "turnFlagOn"}], comment="go"
        ),
    )
    assert isinstance(created, FeatureFlagScheduledChange)
    assert created.version == 1
    assert created.instructions == [{"kind": "turnFlagOn"}]
    edited = schedules.patch_flag_config_scheduled_change(
        "sched",
        "launch",
        "production",
        created.id,
        FlagScheduledChangesInput(
            instructions=[{"kind": "updateScheduledChangesExecutionDate", "value": soon}]
        ),
    )
    assert (edited.execution_date, edited.version) == (soon, 2)
    listed = schedules.get_flag_config_scheduled_changes("sched", "launch", "production")
    assert [item.id for item in listed.items] == [created.id]
    with pytest.raises(ApiException) as raised:
        schedules.post_flag_config_scheduled_changes(
            "sched",
            "launch",
            "production",
            PostFlagScheduledChangesInput(
                execution_date=soon - 10_000, instructions=[{"kind": "turnFlagOff"}]
            ),
        )
    assert raised.value.status == 400

    wait_until(
        lambda: flags.get_feature_flag("sched", "launch").environments["production"].on,  # type: ignore[index]
        timeout=30,
        what="the worker to apply the scheduled change",
    )
    assert schedules.get_flag_config_scheduled_changes("sched", "launch", "production").items == []
    done = schedules.get_feature_flag_scheduled_change("sched", "launch", "production", created.id)
    assert done.execution_date == soon


def test_client_makes_a_trigger_whose_url_turns_the_flag_off(
    client: launchdarkly_api.ApiClient, server: str
) -> None:
    ProjectsApi(client).post_project(ProjectPost(key="trig", name="Trig"))
    flags = FeatureFlagsApi(client)
    flags.post_feature_flag("trig", FeatureFlagBody(key="risky", name="Risky"))
    triggers = FlagTriggersApi(client)
    created = triggers.create_trigger_workflow(
        "trig",
        "production",
        "risky",
        TriggerPost(integration_key="generic-trigger", instructions=[{"kind": "turnFlagOn"}]),
    )
    assert isinstance(created, TriggerWorkflowRep)
    assert created.trigger_url is not None
    assert created.trigger_url.startswith(server + "/webhook/triggers/")
    answer = httpx.post(created.trigger_url, json={"alert": "recovered"}, timeout=10)
    assert answer.status_code == 200, answer.text
    assert flags.get_feature_flag("trig", "risky").environments["production"].on  # type: ignore[index]
    replaced = triggers.patch_trigger_workflow(
        "trig",
        "production",
        "risky",
        created.id,
        FlagTriggerInput(
            instructions=[
                {"kind": "replaceTriggerActionInstructions", "value": [{"kind": "turnFlagOff"}]}
            ]
        ),
    )
    assert replaced.instructions == [{"kind": "turnFlagOff"}]
    assert httpx.post(created.trigger_url, timeout=10).status_code == 200
    assert not flags.get_feature_flag("trig", "risky").environments["production"].on  # type: ignore[index]
    listed = triggers.get_trigger_workflows("trig", "production", "risky")
    assert listed.items is not None
    [item] = listed.items
    assert (item.trigger_count, item.enabled) == (2, True)
    assert item.trigger_url is not None
    assert "*" in item.trigger_url
    triggers.delete_trigger_workflow("trig", "production", "risky", created.id)
    assert httpx.post(created.trigger_url, timeout=10).status_code == 404


def client_for(server: str, token: str) -> launchdarkly_api.ApiClient:
    configuration = launchdarkly_api.Configuration(host=server)
    configuration.api_key["ApiKey"] = token
    return launchdarkly_api.ApiClient(configuration)


def writer_token(server: str, name: str, project: str) -> str:
    made = httpx.post(
        f"{server}/api/v2/tokens",
        json={"name": name, "role": "writer", "projectKey": project},
        headers={"Authorization": ADMIN_TOKEN},
        timeout=10,
    )
    assert made.status_code == 201, made.text
    token: str = made.json()["token"]
    return token


def test_client_asks_for_reviews_and_applies_approval_requests(
    client: launchdarkly_api.ApiClient, server: str
) -> None:
    """Production requires approval: the requester's direct change is a 405; their request,
    approved by a second token, applies; a second request with an executionDate becomes a
    scheduled change the worker runs."""
    ProjectsApi(client).post_project(ProjectPost(key="appr", name="Approvals"))
    flags = FeatureFlagsApi(client)
    flags.post_feature_flag("appr", FeatureFlagBody(key="gate", name="Gate"))
    EnvironmentsApi(client).patch_environment(
        "appr",
        "production",
        [PatchOperation(op="replace", path="/approvalSettings/required", value=True)],
    )
    with (
        client_for(server, writer_token(server, "alice", "appr")) as alice,
        client_for(server, writer_token(server, "bob", "appr")) as bob,
    ):
        with pytest.raises(ApiException) as refused:
            semantic_patch(
                alice,
                "/api/v2/flags/appr/gate",
                {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]},
                "FeatureFlag",
            )
        assert refused.value.status == 405
        asking, reviewing = ApprovalsApi(alice), ApprovalsApi(bob)
        created = asking.post_approval_request_for_flag(
            "appr",
            "gate",
            "production",
            CreateFlagConfigApprovalRequestRequest(
                description="open the gate",
                instructions=[{"kind": "turnFlagOn"}],
                comment="launch day",
            ),
        )
        assert isinstance(created, FlagConfigApprovalRequestResponse)
        assert (created.status, created.review_status) == ("pending", "pending")
        with pytest.raises(ApiException) as own:
            asking.post_approval_request_review_for_flag(
                "appr",
                "gate",
                "production",
                created.id,
                PostApprovalRequestReviewRequest(kind="approve"),
            )
        assert own.value.status == 403
        reviewed = reviewing.post_approval_request_review_for_flag(
            "appr",
            "gate",
            "production",
            created.id,
            PostApprovalRequestReviewRequest(kind="approve", comment="looks right"),
        )
        assert reviewed.review_status == "approved"
        assert [(r.kind, r.comment) for r in reviewed.all_reviews] == [("approve", "looks right")]
        applied = asking.post_approval_request_apply_for_flag(
            "appr",
            "gate",
            "production",
            created.id,
            PostApprovalRequestApplyRequest(comment="go"),
        )
        assert applied.status == "completed"
        assert applied.applied_date is not None
        assert flags.get_feature_flag("appr", "gate").environments["production"].on  # type: ignore[index]
        listed = asking.get_approvals_for_flag("appr", "gate", "production")
        assert [item.id for item in listed.items] == [created.id]
        every = asking.get_approval_requests(filter='status anyOf ["completed"]')
        assert isinstance(every, ExpandableApprovalRequestsResponse)
        assert [item.id for item in every.items] == [created.id]

        # an executionDate: applying makes a scheduled change, which the worker runs
        soon = int(time.time() * 1000) + 3_000
        later = asking.post_approval_request_for_flag(
            "appr",
            "gate",
            "production",
            CreateFlagConfigApprovalRequestRequest(
                description="close the gate at night",
                instructions=[{"kind": "turnFlagOff"}],
                execution_date=soon,
            ),
        )
        reviewing.post_approval_request_review_for_flag(
            "appr",
            "gate",
            "production",
            later.id,
            PostApprovalRequestReviewRequest(kind="approve"),
        )
        scheduled = asking.post_approval_request_apply_for_flag(
            "appr", "gate", "production", later.id, PostApprovalRequestApplyRequest()
        )
        assert (scheduled.status, scheduled.execution_date) == ("scheduled", soon)
        [change] = (
            ScheduledChangesApi(alice)
            .get_flag_config_scheduled_changes("appr", "gate", "production")
            .items
        )
        assert (change.execution_date, change.instructions) == (soon, [{"kind": "turnFlagOff"}])
        wait_until(
            lambda: not flags.get_feature_flag("appr", "gate").environments["production"].on,  # type: ignore[index]
            timeout=30,
            what="the worker to apply the approved scheduled change",
        )
        done = asking.get_approval_for_flag("appr", "gate", "production", later.id)
        assert done.status == "completed"

        # a pending request may be deleted
        dropped = asking.post_approval_request_for_flag(
            "appr",
            "gate",
            "production",
            CreateFlagConfigApprovalRequestRequest(
                description="never mind", instructions=[{"kind": "turnFlagOn"}]
            ),
        )
        asking.delete_approval_request_for_flag("appr", "gate", "production", dropped.id)
        with pytest.raises(ApiException) as gone:
            asking.get_approval_for_flag("appr", "gate", "production", dropped.id)
        assert gone.value.status == 404
