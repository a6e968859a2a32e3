"""The UI's static file server: `/` and `/ui` redirect to `/ui/`, files answer with their media
type and strict security headers, unknown paths 404, writes 405; only UI paths are claimed."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from flagstaff_server.ui.asgi import STATIC_DIR, UiApp, is_ui_path
from support.in_process import asgi_client


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(UiApp(), base_url="http://ui.test") as http:
        yield http


@pytest.mark.parametrize("path", ["/", "/ui"])
async def test_root_redirects_to_the_ui(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 308
    assert response.headers["location"] == "/ui/"


async def test_index_is_html_with_a_strict_content_security_policy(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/ui/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    stored = (STATIC_DIR / "index.html").read_bytes()
    # the page as stored, with a preload for every module before its script
    preloads = re.findall(rb'<link rel="modulepreload" href="([^"]+)">\s*', response.content)
    modules = sorted(f"/ui/{path.name}".encode() for path in STATIC_DIR.glob("*.js"))
    assert sorted(preloads) == modules
    assert re.sub(rb'<link rel="modulepreload" href="[^"]+">\s*', b"", response.content) == stored
    assert response.content.index(b"modulepreload") < response.content.index(b"<script ")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("/ui/app.js", "text/javascript; charset=utf-8"),
        ("/ui/style.css", "text/css; charset=utf-8"),
    ],
)
async def test_files_have_their_media_type(
    client: httpx.AsyncClient, path: str, media_type: str
) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type


async def test_every_module_the_pages_import_is_served(client: httpx.AsyncClient) -> None:
    for module in sorted(STATIC_DIR.glob("*.js")):
        assert (await client.get(f"/ui/{module.name}")).status_code == 200


@pytest.mark.parametrize("path", ["/ui/missing.js", "/ui/../asgi.py", "/ui/__init__.py"])
async def test_unknown_paths_are_404(client: httpx.AsyncClient, path: str) -> None:
    assert (await client.get(path)).status_code == 404


async def test_head_has_no_body_and_writes_are_405(client: httpx.AsyncClient) -> None:
    head = await client.head("/ui/app.js")
    assert head.status_code == 200
    assert head.content == b""
    assert int(head.headers["content-length"]) == len((STATIC_DIR / "app.js").read_bytes())
    post = await client.post("/ui/app.js")
    assert post.status_code == 405
    assert post.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    ("path", "owned"),
    [("/", True), ("/ui", True), ("/ui/x.js", True), ("/api/v2", False), ("/uix", False)],
)
def test_ui_claims_only_its_paths(path: str, owned: bool) -> None:
    assert is_ui_path(path) is owned


def test_files_are_read_from_the_given_directory(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html>")
    (tmp_path / "notes.txt").write_text("not served")
    app = UiApp(tmp_path)
    assert set(app.files) == {"/ui/", "/ui/index.html"}
