"""Every route that declares an action asks for it at run time: a token whose policy allows
nothing is refused by each such route of the OpenAPI document with a 403 naming exactly the
declared action and resource (`http/api/route_actions.py`), before any handler runs. Complements
the walk in test_api_policy_tokens.py, which checks that every route is declared."""

from __future__ import annotations

import httpx
import pytest
from flagstaff_server.http.api.route_actions import ROUTE_ACTIONS, Needs, resource_text
from platform_api import ADMIN, problem

# One store suffices: the route checks run before any store is read.
pytestmark = pytest.mark.parametrize("server", ["memory"], indirect=True)


async def test_every_declared_route_refuses_a_caller_without_its_action(
    client: httpx.AsyncClient,
) -> None:
    made = await client.post(
        "/api/v2/tokens", json={"name": "nothing", "inlineRole": []}, headers=ADMIN
    )
    assert made.status_code == 201, made.text
    token = {"Authorization": made.json()["token"]}
    spec = (await client.get("/api/v2/openapi.json")).json()
    checked = 0
    for path, operations in spec["paths"].items():
        for method in operations:
            declared = ROUTE_ACTIONS.get((method.upper(), path))
            if not isinstance(declared, Needs):
                continue
            params = {name.strip("{}"): "x" for name in path.split("/") if name.startswith("{")}
            url = resource_text(path, params)
            response = await client.request(method.upper(), url, json={}, headers=token)
            body = problem(response, 403)
            assert (body["action"], body["resource"]) == (
                declared.action,
                resource_text(declared.resource, params),
            ), (method, path)
            checked += 1
    assert checked == sum(isinstance(d, Needs) for d in ROUTE_ACTIONS.values())
