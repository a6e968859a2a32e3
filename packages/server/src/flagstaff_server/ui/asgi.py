"""Serves the web UI's static files under `/ui/` (and sends `/` there). Raw ASGI like the other
planes: files are read once at start, answered with strict security headers, never executed.
Routing inside the UI is by URL fragment, so only real files exist here."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flagstaff_server.asgi import Scope, Send

STATIC_DIR = Path(__file__).with_name("static")
PREFIX = "/ui/"
MEDIA_TYPES: Mapping[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
# Only our own files may run or load; inline scripts and styles are refused, so injected
# markup cannot execute. The UI writes dynamic text with textContent, never as HTML.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-cache"),
)


def is_ui_path(path: str) -> bool:
    return path in ("/", "/ui") or path.startswith(PREFIX)


def load_files(directory: Path = STATIC_DIR) -> dict[str, tuple[bytes, str]]:
    """Every servable file by URL path: `/ui/app.js` -> (bytes, media type)."""
    files: dict[str, tuple[bytes, str]] = {}
    for path in sorted(directory.rglob("*")):
        media_type = MEDIA_TYPES.get(path.suffix)
        if path.is_file() and media_type is not None:
            url = PREFIX + path.relative_to(directory).as_posix()
            files[url] = (path.read_bytes(), media_type)
    index = PREFIX + "index.html"
    if index in files:
        files[index] = (with_module_preloads(files[index][0], files), files[index][1])
        files[PREFIX] = files[index]
    return files


def with_module_preloads(page: bytes, files: Mapping[str, tuple[bytes, str]]) -> bytes:
    """The page with a `modulepreload` link for every module before its first script, so the
    browser fetches them all at once instead of one import level after another (four levels
    deep: app.js, the pages, their parts, the parts' helpers)."""
    links = "".join(
        f'<link rel="modulepreload" href="{url}">\n  '
        for url, (_, media_type) in files.items()
        if media_type.startswith("text/javascript")
    )
    marker = b"<script "
    at = page.find(marker)
    return page if at < 0 else page[:at] + links.encode() + page[at:]


class UiApp:
    def __init__(self, directory: Path = STATIC_DIR) -> None:
        self.files = load_files(directory)

    async def __call__(self, scope: Scope, receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        method: str = scope["method"]
        if path in ("/", "/ui"):
            await respond(send, 308, b"", "text/plain", [(b"location", PREFIX.encode())])
            return
        found = self.files.get(path)
        if found is None:
            await respond(send, 404, b"not found\n", "text/plain; charset=utf-8")
            return
        if method not in ("GET", "HEAD"):
            await respond(
                send, 405, b"method not allowed\n", "text/plain", [(b"allow", b"GET, HEAD")]
            )
            return
        body, media_type = found
        await respond(send, 200, b"" if method == "HEAD" else body, media_type, length=len(body))


async def respond(
    send: Send,
    status: int,
    body: bytes,
    media_type: str,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    length: int | None = None,
) -> None:
    headers = [
        (b"content-type", media_type.encode()),
        (b"content-length", str(len(body) if length is None else length).encode()),
        *SECURITY_HEADERS,
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
