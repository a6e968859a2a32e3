"""Schemathesis over the whole OpenAPI document at `/api/v2/openapi.json` (every router, the
flags and segments ones included): generated requests, valid and invalid, never get a 5xx, and
every answer matches the schema the document declares for it. Example counts stay small for CI.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from flagstaff_server import demo
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.http.api.application import build_api
from hypothesis import HealthCheck, given, settings
from platform_api import ADMIN
from support.in_process import control_plane

MAX_EXAMPLES = 15


def build_schema() -> Any:
    """The management API over an in-memory store holding the demo project, so generated requests
    find something besides 404s. Built at import: schemathesis's lazy fixture loader does not work
    with this pytest version, and nothing here touches disk or the network."""
    plane = control_plane(InMemoryStore(), admin_token=ADMIN["Authorization"])
    demo.create_demo(plane)
    api = build_api(plane, version="test")
    loaded: Any = schemathesis.openapi.from_asgi("/api/v2/openapi.json", api)
    return loaded


OPERATIONS = {result.ok().label: result.ok() for result in build_schema().get_all_operations()}
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.response_schema_conformance,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
]


def test_document_covers_the_platform_and_the_flag_endpoints() -> None:
    paths = {label.split(" ", 1)[1] for label in OPERATIONS}
    for path in (
        "/api/v2/projects",
        "/api/v2/projects/{projectKey}/environments/{environmentKey}",
        "/api/v2/tokens",
        "/api/v2/auditlog",
        "/api/v2/flags/{projectKey}/{featureFlagKey}",
    ):
        assert path in paths


@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_operation_never_fails_and_answers_as_documented(label: str) -> None:
    # One pytest case per operation; Hypothesis drives the examples inside it (schemathesis's own
    # pytest integration gives every case the same node id under this pytest version).
    @given(case=OPERATIONS[label].as_strategy())
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=dict(ADMIN), checks=CHECKS)

    check()
