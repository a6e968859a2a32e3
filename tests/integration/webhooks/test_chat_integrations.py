"""Chat integrations of a project (docs/workflows.md, "Chat notifications") delivered by the whole
server in this process (under uvicorn in a thread, the worker role in it) through the webhook
outbox to receivers on loopback: a Slack-compatible receiver checks each Block Kit message (who,
what, where, the summary of the change, the button to the flag's page in the UI), a generic one
checks its JSON and its signature; another project's changes reach neither. The API refuses bad
input naming the field and keeps the URLs from readers and the audit log."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import orjson
from flagstaff_server.settings import Settings
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.threaded_servers import serve_http

TOKEN = "chat-admin"
PUBLIC_URL = "https://flags.example.test"
SECRET = "generic-secret"
FLAGS = [{"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]}]
BLOCK_TYPES = {"section", "context", "actions", "divider", "header"}


@dataclass
class Inbox:
    """Requests a chat receiver got: (headers, raw body), in arrival order."""

    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [orjson.loads(body) for _, body in self.requests]


@contextmanager
def receiving() -> Iterator[tuple[str, Inbox]]:
    inbox = Inbox()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with inbox.lock:
                inbox.requests.append((dict(self.headers.items()), body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    with serve_http(Handler) as server:
        yield f"{server.url}/hook", inbox


@contextmanager
def flagstaff(tmp_path: Path) -> Iterator[httpx.Client]:
    settings = Settings(
        data_dir=tmp_path,
        admin_token=TOKEN,
        seed_demo=False,
        worker_poll_seconds=0.2,
        public_url=PUBLIC_URL,
    )
    with (
        serve_flagstaff(settings) as server,
        httpx.Client(base_url=server.url, headers={"Authorization": TOKEN}, timeout=30) as client,
    ):
        yield client


def ok(response: httpx.Response) -> Any:
    assert response.is_success, response.text
    return response.json() if response.content else None


def check_block_kit(message: dict[str, Any]) -> None:
    """The structure Slack's incoming webhooks take: a fallback `text` and blocks of known
    types, each text object typed, within Block Kit's size limits."""
    assert isinstance(message["text"], str)
    assert message["text"]
    assert 0 < len(message["blocks"]) <= 50
    for block in message["blocks"]:
        assert block["type"] in BLOCK_TYPES, block
        texts = [block["text"]] if "text" in block else []
        texts += block.get("fields", []) + block.get("elements", [])
        for text in texts:
            if text.get("type") == "button":
                assert text["text"]["type"] == "plain_text"
                assert text["url"].startswith("https://")
            else:
                assert text["type"] == "mrkdwn", text
                assert len(text["text"]) <= 3000


def test_slack_and_generic_receivers_get_each_change_of_their_project(tmp_path: Path) -> None:
    with (
        receiving() as (slack_url, slack),
        receiving() as (generic_url, generic),
        flagstaff(tmp_path) as client,
    ):
        for key in ("shop", "blog"):
            ok(client.post("/api/v2/projects", json={"key": key, "name": key.title()}))
        made = ok(
            client.post(
                "/api/v2/projects/shop/integrations/slack",
                json={"name": "#releases", "config": {"url": slack_url}, "statements": FLAGS},
            )
        )
        assert made["kind"] == "slack"
        assert made["config"] == {"url": slack_url}
        ok(
            client.post(
                "/api/v2/projects/shop/integrations/generic",
                json={"config": {"url": generic_url, "secret": SECRET}},
            )
        )
        ok(client.post("/api/v2/flags/blog", json={"key": "elsewhere", "name": "Elsewhere"}))
        ok(client.post("/api/v2/flags/shop", json={"key": "checkout", "name": "Checkout"}))
        ok(
            client.patch(
                "/api/v2/flags/shop/checkout",
                json={
                    "comment": "launch <today> & tell everyone",
                    "patch": [
                        {"op": "replace", "path": "/environments/production/on", "value": True}
                    ],
                },
            )
        )
        # the generic one has no filter: it hears of its own creation too
        wait_until(lambda: len(slack.requests) >= 2, what="two messages", timeout=30)
        wait_until(lambda: len(generic.requests) >= 3, what="three messages", timeout=30)
        created, toggled = slack.bodies()
        for message in (created, toggled):
            check_block_kit(message)
        assert "created the flag" in created["blocks"][2]["text"]["text"]
        title, facts, changes, comment, actions = toggled["blocks"]
        assert "Checkout" in title["text"]["text"]
        assert {f["text"] for f in facts["fields"]} >= {
            "*Project*\nshop",
            "*Environment*\nproduction",
            "*What*\nflag checkout",
            "*Who*\nFLAGSTAFF_ADMIN_TOKEN",
        }
        assert "• production: turned on" in changes["text"]["text"]
        # Slack's markup characters are sent as entities
        assert comment["elements"][0]["text"] == "Comment: launch &lt;today&gt; &amp; tell everyone"
        assert (
            actions["elements"][0]["url"] == f"{PUBLIC_URL}/ui/#/p/shop/e/production/flags/checkout"
        )

        made_itself, generic_created, generic_toggled = generic.bodies()
        assert made_itself["resourceKind"] == "integration"
        assert generic_toggled["kind"] == "flagstaff.change"
        assert (generic_toggled["project"], generic_toggled["environment"]) == (
            "shop",
            "production",
        )
        assert generic_toggled["key"] == "checkout"
        assert "production: turned on" in generic_toggled["summary"]
        assert generic_toggled["link"] == actions["elements"][0]["url"]
        assert generic_created["summary"] == ["created the flag"]
        for headers, body in generic.requests:
            expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            assert hmac.compare_digest(headers["X-LD-Signature"], expected)
        assert not any("X-LD-Signature" in headers for headers, _ in slack.requests)
        # nothing of the other project, and nothing more
        assert all(m["project"] == "shop" for m in generic.bodies())
        assert (len(slack.requests), len(generic.requests)) == (2, 3)


def test_the_api_checks_integrations_and_keeps_their_urls_to_admins(tmp_path: Path) -> None:
    with flagstaff(tmp_path) as client:
        ok(client.post("/api/v2/projects", json={"key": "shop", "name": "Shop"}))
        base = "/api/v2/projects/shop/integrations"
        refusals = [
            ("slack", {}, 400, "/config"),
            ("slack", {"config": {"url": "ftp://x"}}, 400, "/config/url"),
            ("slack", {"config": {"url": "https://h/x", "secret": "s"}}, 400, "/config/secret"),
            ("slack", {"config": {"url": "https://h/x"}, "colour": 1}, 400, "/colour"),
            ("generic", {"config": {"url": "https://h/x"}, "statements": [{}]}, 400, None),
            ("teams", {"config": {"url": "https://h/x"}}, 404, None),
        ]
        for kind, body, status, path in refusals:
            answer = client.post(f"{base}/{kind}", json=body)
            assert answer.status_code == status, (body, answer.text)
            if path is not None:
                assert answer.json()["path"] == path
        assert ok(client.get(f"{base}/slack"))["items"] == []
        made = ok(client.post(f"{base}/slack", json={"config": {"url": "https://hooks.test/s"}}))
        reader = ok(
            client.post(
                "/api/v2/tokens", json={"name": "r", "role": "reader", "projectKey": "shop"}
            )
        )["token"]
        seen = ok(client.get(f"{base}/slack/{made['_id']}", headers={"Authorization": reader}))
        assert seen["config"] == {"url": "********"}
        refused = client.post(
            f"{base}/slack",
            json={"config": {"url": "https://x/y"}},
            headers={"Authorization": reader},
        )
        assert refused.status_code == 403
        bad = client.patch(
            f"{base}/slack/{made['_id']}",
            json=[{"op": "replace", "path": "/config/url", "value": "nope"}],
        )
        assert bad.status_code == 400
        assert bad.json()["path"] == "/config/url"
        off = ok(
            client.patch(
                f"{base}/slack/{made['_id']}",
                json=[{"op": "replace", "path": "/on", "value": False}],
            )
        )
        assert (off["on"], off["config"]["url"]) == (False, "https://hooks.test/s")
        assert client.delete(f"{base}/slack/{made['_id']}").status_code == 204
        assert client.get(f"{base}/slack/{made['_id']}").status_code == 404
        log = client.get("/api/v2/auditlog", params={"limit": 50}).text
        assert "hooks.test" not in log
        assert "createIntegration" in log
