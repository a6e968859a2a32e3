"""The official `launchdarkly-api` client against `flagstaff serve` for the platform endpoints:
projects, environments (key resets included), access tokens and the audit log. The client checks
every answer against LaunchDarkly's models, so a missing or mistyped field fails here."""

from __future__ import annotations

from collections.abc import Iterator

import launchdarkly_api
import pytest
from launchdarkly_api.api.access_tokens_api import AccessTokensApi
from launchdarkly_api.api.audit_log_api import AuditLogApi
from launchdarkly_api.api.environments_api import EnvironmentsApi
from launchdarkly_api.api.projects_api import ProjectsApi
from launchdarkly_api.exceptions import ApiException
from launchdarkly_api.models.access_token_post import AccessTokenPost
from launchdarkly_api.models.environment_post import EnvironmentPost
from launchdarkly_api.models.patch_operation import PatchOperation
from launchdarkly_api.models.project_post import ProjectPost
from support.processes import ServeProcess, running

ADMIN_TOKEN = "ld-client-admin-token"
START_DEADLINE_SECONDS = 60.0

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[launchdarkly_api.ApiClient]:
    server = ServeProcess(
        data_dir=tmp_path_factory.mktemp("ld-client"),
        name="server",
        admin_token=ADMIN_TOKEN,
        start_timeout=START_DEADLINE_SECONDS,
    )
    with running(server):
        configuration = launchdarkly_api.Configuration(host=server.url)
        configuration.api_key["ApiKey"] = ADMIN_TOKEN
        with launchdarkly_api.ApiClient(configuration) as api:
            yield api


def test_projects_and_environments_round_trip(client: launchdarkly_api.ApiClient) -> None:
    projects = ProjectsApi(client)
    environments = EnvironmentsApi(client)
    created = projects.post_project(ProjectPost(key="ld-shop", name="Shop", tags=["retail"]))
    assert {env.key for env in created.environments} == {"production", "test"}
    fetched = projects.get_project("ld-shop", expand="environments")
    assert fetched.environments is not None
    assert fetched.environments.total_count == 2
    listed = projects.get_projects()
    assert "ld-shop" in [item.key for item in listed.items]

    staging = environments.post_environment(
        "ld-shop", EnvironmentPost(key="staging", name="Staging", color="123abc")
    )
    assert staging.api_key.startswith("sdk-")
    assert len(staging.id) == 24
    patched = environments.patch_environment(
        "ld-shop",
        "staging",
        [PatchOperation(op="replace", path="/requireComments", value=True)],
    )
    assert patched.require_comments is True
    page = environments.get_environments_by_project("ld-shop")
    assert [env.key for env in page.items] == ["production", "staging", "test"]

    reset = environments.reset_environment_sdk_key("ld-shop", "staging")
    assert reset.api_key != staging.api_key
    mobile = environments.reset_environment_mobile_key("ld-shop", "staging")
    assert mobile.mobile_key != staging.mobile_key
    assert environments.get_environment("ld-shop", "staging").api_key == reset.api_key

    environments.delete_environment("ld-shop", "staging")
    with pytest.raises(ApiException) as missing:
        environments.get_environment("ld-shop", "staging")
    assert missing.value.status == 404


def test_access_tokens_and_audit_log(client: launchdarkly_api.ApiClient) -> None:
    tokens = AccessTokensApi(client)
    created = tokens.post_token(AccessTokenPost(name="ci", role="reader"))
    assert created.token is not None
    assert created.token.startswith("api-")
    assert tokens.get_token(created.id).token == f"****{created.token[-4:]}"
    listed = tokens.get_tokens()
    assert created.id in [token.id for token in listed.items or []]
    tokens.delete_token(created.id)
    with pytest.raises(ApiException) as gone:
        tokens.get_token(created.id)
    assert gone.value.status == 404

    audit = AuditLogApi(client)
    entries = audit.get_audit_log_entries(limit=5)
    assert entries.items
    first = entries.items[0]
    assert first.accesses[0].action == "deleteAccessToken"
    one = audit.get_audit_log_entry(first.id)
    assert one.id == first.id


def test_reader_token_cannot_create_projects(client: launchdarkly_api.ApiClient) -> None:
    secret = AccessTokensApi(client).post_token(AccessTokenPost(name="r", role="reader")).token
    assert secret is not None
    configuration = launchdarkly_api.Configuration(host=client.configuration.host)
    configuration.api_key["ApiKey"] = secret
    with launchdarkly_api.ApiClient(configuration) as reader:
        with pytest.raises(ApiException) as denied:
            ProjectsApi(reader).post_project(ProjectPost(key="nope", name="Nope"))
        assert denied.value.status == 403
        assert ProjectsApi(reader).get_projects().total_count is not None
