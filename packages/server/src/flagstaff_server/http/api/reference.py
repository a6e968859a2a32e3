"""The API reference page at `/api/v2/docs`: Swagger UI served from this server, from the files the
`swagger-ui-bundle-v2` wheel ships, so the page works offline. It must load nothing from another
origin; only the files named in `ASSETS` are served, never the wheel's whole directory.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, status
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]  # no py.typed

FILES = Path(str(swagger_ui_path))
# the wheel's folder is named for the Swagger UI version it holds, so it doubles as a cache key
BUNDLE = FILES.name
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}


def asset_path(prefix: str, name: str) -> str:
    return f"{prefix}/docs/assets/{BUNDLE}/{name}"


def router(*, prefix: str, openapi_url: str, title: str) -> APIRouter:
    """Routes for the page at `{prefix}/docs` and its assets below `{prefix}/docs/assets/`."""
    routes = APIRouter(include_in_schema=False)

    @routes.get(f"{prefix}/docs")
    async def docs_page() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} - reference",
            swagger_js_url=asset_path(prefix, "swagger-ui-bundle.js"),
            swagger_css_url=asset_path(prefix, "swagger-ui.css"),
            swagger_favicon_url=asset_path(prefix, "favicon-32x32.png"),
            oauth2_redirect_url=None,
        )

    @routes.get(f"{prefix}/docs/assets/{{bundle}}/{{name}}")
    async def docs_asset(bundle: str, name: str) -> FileResponse:
        media_type = ASSETS.get(name)
        if bundle != BUNDLE or media_type is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "No such file")
        # the path names the bundle's version, so a browser may keep a file until we upgrade
        return FileResponse(
            FILES / name,
            media_type=media_type,
            headers={"Cache-Control": "public, max-age=31536000, immutable"},
        )

    return routes
