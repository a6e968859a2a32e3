"""`GET /api/v2/docs`: the Swagger UI page loads everything from this server (it must work offline),
and each file it names answers 200 with its media type; its one script of ours (`init.js`, as the
page's Content-Security-Policy allows no inline script) names the OpenAPI document."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import httpx

BASE = "http://flagstaff.test"
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


def referenced_urls(page: str) -> list[str]:
    """Every `src`/`href` attribute and the quoted `url:` Swagger UI is told to load."""
    attributes = re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""", page)
    spec = re.findall(r"""\burl:\s*['"]([^'"]+)['"]""", page)
    return attributes + spec


async def test_docs_page_references_only_this_server(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/docs")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    urls = referenced_urls(response.text)
    assert "/api/v2/docs/init.js" in urls
    init = await client.get("/api/v2/docs/init.js")
    assert init.headers["content-type"].startswith("text/javascript")
    assert referenced_urls(init.text) == ["/api/v2/openapi.json"]
    assert any(url.endswith(".js") for url in urls)
    assert any(url.endswith(".css") for url in urls)
    for url in urls:
        assert urlsplit(urljoin(f"{BASE}/api/v2/docs", url)).netloc == "flagstaff.test", url
    assert "cdn" not in response.text.lower()


async def test_docs_page_assets_answer_with_their_media_type(client: httpx.AsyncClient) -> None:
    page = (await client.get("/api/v2/docs")).text
    assets = [url for url in referenced_urls(page) if url.endswith(tuple(MEDIA_TYPES))]
    assert len(assets) == 4  # Swagger UI's script, style and icon, and init.js

    for url in assets:
        response = await client.get(url)
        assert response.status_code == 200, url
        media_type = MEDIA_TYPES[url[url.rindex(".") :]]
        assert response.headers["content-type"].startswith(media_type), url
        assert len(response.content) > 100, url
    script = await client.get(next(url for url in assets if url.endswith(".js")))
    assert "SwaggerUIBundle" in script.text


async def test_docs_assets_serve_only_the_named_files(client: httpx.AsyncClient) -> None:
    page = (await client.get("/api/v2/docs")).text
    script = next(url for url in referenced_urls(page) if url.endswith(".js"))
    folder = script.rsplit("/", 1)[0]

    for name in ("index.html", "swagger-initializer.js", "..%2F__init__.py", "missing.js"):
        response = await client.get(f"{folder}/{name}")
        assert response.status_code == 404, name
        assert response.headers["content-type"] == "application/problem+json", name
    other_version = script.replace(folder.rsplit("/", 1)[1], "swagger-ui-0.0.0")
    assert (await client.get(other_version)).status_code == 404
