"""Client-side delivery over real HTTP against the whole server (management API + delivery,
SQLite): browser, mobile and SDK-key evalx views, errors, ETag/304, CORS, goals and secure mode.
Streams and OFREP have their own modules."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from client_server import Deployment, b64, running_server
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until

USER = {"kind": "user", "key": "user-1", "name": "Ada"}
BROWSER_FLAGS = {"bool-flag", "string-flag", "number-flag", "float-flag", "object-flag"}
ORIGIN = "http://page.test:8123"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with running_server(Path(tmp_path_factory.mktemp("client"))) as deployment:
        yield deployment


@pytest.fixture
def http(deployment: Deployment) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=deployment.url, timeout=5) as client:
        yield client


def browser_path(deployment: Deployment, context: object = USER, form: str = "contexts") -> str:
    return f"/sdk/evalx/{deployment.client_side_id}/{form}/{b64(context)}"


def test_browser_evalx_returns_client_side_flags_only(
    deployment: Deployment, http: httpx.Client
) -> None:
    response = http.get(browser_path(deployment))
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == BROWSER_FLAGS
    assert body["object-flag"]["value"] == {"size": "xl", "items": [1, 2]}
    assert body["bool-flag"]["variation"] == 1
    assert body["bool-flag"]["version"] == body["bool-flag"]["flagVersion"]
    assert "reason" not in body["bool-flag"]


def test_legacy_and_report_forms_give_the_same_results(
    deployment: Deployment, http: httpx.Client
) -> None:
    expected = http.get(browser_path(deployment)).json()
    assert http.get(browser_path(deployment, form="users")).json() == expected
    for form in ("context", "user"):
        report = http.request(
            "REPORT",
            f"/sdk/evalx/{deployment.client_side_id}/{form}",
            content=json.dumps(USER),
            headers={"Content-Type": "application/json"},
        )
        assert report.status_code == 200, report.text
        assert report.json() == expected


def test_padded_and_old_user_contexts_are_accepted(
    deployment: Deployment, http: httpx.Client
) -> None:
    padded = base64.urlsafe_b64encode(json.dumps({"key": "old-style-user"}).encode()).decode()
    response = http.get(f"/sdk/evalx/{deployment.client_side_id}/contexts/{padded}")
    assert response.status_code == 200, response.text
    assert set(response.json()) == BROWSER_FLAGS


def test_mobile_key_sees_mobile_flags(deployment: Deployment, http: httpx.Client) -> None:
    for authorization in (deployment.mobile_key, f"api_key {deployment.mobile_key}"):
        response = http.get(
            f"/msdk/evalx/contexts/{b64(USER)}", headers={"Authorization": authorization}
        )
        assert response.status_code == 200, response.text
        assert set(response.json()) == BROWSER_FLAGS | {"mobile-flag"}
    report = http.request(
        "REPORT",
        "/msdk/evalx/user",
        content=json.dumps(USER),
        headers={"Authorization": deployment.mobile_key, "Content-Type": "application/json"},
    )
    assert set(report.json()) == BROWSER_FLAGS | {"mobile-flag"}


def test_sdk_key_sees_every_flag(deployment: Deployment, http: httpx.Client) -> None:
    response = http.get(
        f"/sdk/evalx/contexts/{b64(USER)}", headers={"Authorization": deployment.sdk_key}
    )
    assert response.status_code == 200, response.text
    assert set(response.json()) == BROWSER_FLAGS | {"mobile-flag", "server-flag"}


def test_with_reasons_adds_reasons(deployment: Deployment, http: httpx.Client) -> None:
    body = http.get(browser_path(deployment) + "?withReasons=true").json()
    assert body["bool-flag"]["reason"] == {"kind": "FALLTHROUGH"}


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("browser", {}),
        ("/msdk/evalx/contexts/{ctx}", {"Authorization": "mobile"}),
        ("/sdk/evalx/contexts/{ctx}", {"Authorization": "sdk"}),
    ],
)
def test_every_evalx_poll_answers_304_to_its_etag(
    deployment: Deployment, http: httpx.Client, path: str, headers: dict[str, str]
) -> None:
    keys = {"mobile": deployment.mobile_key, "sdk": deployment.sdk_key}
    headers = {name: keys[value] for name, value in headers.items()}
    url = browser_path(deployment) if path == "browser" else path.format(ctx=b64(USER))
    first = http.get(url, headers=headers)
    etag = first.headers["ETag"]
    again = http.get(url, headers={**headers, "If-None-Match": etag})
    assert (again.status_code, again.content, again.headers["ETag"]) == (304, b"", etag)
    other = http.get(url.replace(b64(USER), b64({"key": "someone-else"})), headers=headers)
    assert other.headers["ETag"] != etag


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/sdk/evalx/{env}/contexts/!!not-base64!!", 400),
        ("/sdk/evalx/{env}/contexts/" + b64("not an object"), 400),
        ("/sdk/evalx/{env}/contexts/bm90IGpzb24", 400),  # "not json"
        ("/sdk/evalx/{env}/contexts/" + b64({"kind": "user"}), 400),  # no key
        ("/sdk/evalx/{env}/contexts/" + b64({"kind": "multi"}), 400),
        ("/sdk/evalx/000000000000000000000000/contexts/" + b64(USER), 404),
        ("/eval/000000000000000000000000/" + b64(USER), 404),
        ("/sdk/goals/000000000000000000000000", 404),
        ("/sdk/evalx/{env}/somewhere/" + b64(USER), 404),
    ],
)
def test_bad_requests_get_clear_errors(
    deployment: Deployment, http: httpx.Client, path: str, status: int
) -> None:
    response = http.get(path.format(env=deployment.client_side_id))
    assert response.status_code == status, response.text
    problem = response.json()
    assert problem["status"] == status
    assert problem["message"]


def test_report_needs_a_json_body(deployment: Deployment, http: httpx.Client) -> None:
    url = f"/sdk/evalx/{deployment.client_side_id}/context"
    plain = http.request("REPORT", url, content=json.dumps(USER), headers={"Content-Type": "text"})
    assert plain.status_code == 415
    broken = http.request("REPORT", url, content=b"{", headers={"Content-Type": "application/json"})
    assert (broken.status_code, broken.json()["path"]) == (400, "context")


def test_keyed_endpoints_refuse_missing_and_unknown_keys(
    deployment: Deployment, http: httpx.Client
) -> None:
    url = f"/msdk/evalx/contexts/{b64(USER)}"
    assert http.get(url).status_code == 401
    assert http.get(url, headers={"Authorization": "mob-unknown"}).status_code == 401
    assert http.get(url, headers={"Authorization": deployment.sdk_key}).status_code == 401
    sdk = f"/sdk/evalx/contexts/{b64(USER)}"
    assert http.get(sdk, headers={"Authorization": deployment.mobile_key}).status_code == 401


def test_goals_are_an_empty_list(deployment: Deployment, http: httpx.Client) -> None:
    url = f"/sdk/goals/{deployment.client_side_id}"
    response = http.get(url, headers={"Origin": ORIGIN})
    assert (response.status_code, response.json()) == (200, [])
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    again = http.get(url, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304


def test_preflight_allows_the_browser_sdk_headers(
    deployment: Deployment, http: httpx.Client
) -> None:
    response = http.options(
        browser_path(deployment),
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "REPORT",
            "Access-Control-Request-Headers": "content-type,x-launchdarkly-user-agent",
        },
    )
    assert response.status_code == 204
    headers = response.headers
    assert headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "REPORT" in headers["Access-Control-Allow-Methods"]
    allowed = {h.strip().lower() for h in headers["Access-Control-Allow-Headers"].split(",")}
    assert {
        "content-type",
        "x-launchdarkly-user-agent",
        "x-launchdarkly-event-schema",
        "x-launchdarkly-payload-id",
        "x-launchdarkly-wrapper",
        "if-none-match",
        "authorization",
    } <= allowed
    assert headers["Access-Control-Max-Age"] == "300"


def test_cors_headers_on_200_304_errors_and_streams(
    deployment: Deployment, http: httpx.Client
) -> None:
    first = http.get(browser_path(deployment), headers={"Origin": ORIGIN})
    cached = http.get(
        browser_path(deployment), headers={"Origin": ORIGIN, "If-None-Match": first.headers["ETag"]}
    )
    missing = http.get(
        "/sdk/evalx/000000000000000000000000/contexts/" + b64(USER), headers={"Origin": ORIGIN}
    )
    for response in (first, cached, missing):
        assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert "ETag" in response.headers["Access-Control-Expose-Headers"]
    url = f"/eval/{deployment.client_side_id}/{b64(USER)}"
    with http.stream("GET", url, headers={"Origin": ORIGIN}) as stream:
        assert stream.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert stream.headers["Content-Type"].startswith("text/event-stream")


@pytest.fixture
def secure_deployment(tmp_path: Path) -> Iterator[Deployment]:
    with running_server(tmp_path) as deployment:
        deployment.set_secure_mode(True)
        yield deployment


def test_secure_mode_accepts_only_the_official_sdk_hash(
    secure_deployment: Deployment, http: httpx.Client
) -> None:
    deployment = secure_deployment
    url = f"{deployment.url}{browser_path(deployment)}"
    wait_until(lambda: httpx.get(url).status_code == 400, what="secure mode reaches delivery")
    refused = httpx.get(url)
    assert refused.json()["message"] == (
        "Environment is in secure mode, and context hash does not match."
    )
    official = LDClient(config=Config(deployment.sdk_key, offline=True))
    try:
        right = official.secure_mode_hash(Context.from_dict(USER))
    finally:
        official.close()
    wrong = right[:-1] + ("0" if right[-1] != "0" else "1")
    assert httpx.get(url, params={"h": wrong}).status_code == 400
    accepted = httpx.get(url, params={"h": right})
    assert accepted.status_code == 200, accepted.text
    assert set(accepted.json()) == BROWSER_FLAGS
    stream = f"{deployment.url}/eval/{deployment.client_side_id}/{b64(USER)}"
    assert httpx.get(stream, params={"h": wrong}).status_code == 400
    # mobile and SDK keys are secrets held by the app itself: no hash needed
    mobile = httpx.get(
        f"{deployment.url}/msdk/evalx/contexts/{b64(USER)}",
        headers={"Authorization": deployment.mobile_key},
    )
    assert mobile.status_code == 200
    # OFREP cannot carry the hash: a client-side id is refused, a server's key still works
    ofrep = f"{deployment.url}/ofrep/v1/evaluate/flags"
    body = {"context": {"targetingKey": "user-1"}}
    browser_key = {"Authorization": f"Bearer {deployment.client_side_id}"}
    assert httpx.post(ofrep, json=body, headers=browser_key).status_code == 403
    server_key = {"Authorization": f"Bearer {deployment.sdk_key}"}
    assert httpx.post(ofrep, json=body, headers=server_key).status_code == 200
