"""The API reference page at `/api/v2/docs`: Swagger UI served from this server, from the files the
`swagger-ui-bundle-v2` wheel ships, so the page works offline. It must load nothing from another
origin; only the files named in `ASSETS` are served, never the wheel's whole directory. The page
has no inline script (Swagger UI is started by `docs/init.js`), so its Content-Security-Policy
lets only this server's files run, and it may not be framed.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import orjson
from fastapi import APIRouter, HTTPException, status
from fastapi.responses import FileResponse, HTMLResponse, Response
from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]  # no py.typed

FILES = Path(str(swagger_ui_path))
# the wheel's folder is named for the Swagger UI version it holds, so it doubles as a cache key
BUNDLE = FILES.name
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}


PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def asset_path(prefix: str, name: str) -> str:
    return f"{prefix}/docs/assets/{BUNDLE}/{name}"


def page(*, prefix: str, title: str) -> str:
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<link rel="stylesheet" href="{asset_path(prefix, "swagger-ui.css")}">
<link rel="icon" href="{asset_path(prefix, "favicon-32x32.png")}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{asset_path(prefix, "swagger-ui-bundle.js")}"></script>
<script src="{prefix}/docs/init.js"></script>
</body>
</html>
"""


def init_script(openapi_url: str) -> str:
    """What FastAPI's page writes inline: start Swagger UI on the OpenAPI document."""
    return f"""window.ui = SwaggerUIBundle({{
  url: {orjson.dumps(openapi_url).decode()},
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
}});
"""


def router(*, prefix: str, openapi_url: str, title: str) -> APIRouter:
    """Routes for the page at `{prefix}/docs` and its assets below `{prefix}/docs/assets/`."""
    routes = APIRouter(include_in_schema=False)

    @routes.get(f"{prefix}/docs")
    async def docs_page() -> HTMLResponse:
        return HTMLResponse(page(prefix=prefix, title=f"{title} - reference"), headers=PAGE_HEADERS)

    @routes.get(f"{prefix}/docs/init.js")
    async def docs_init() -> Response:
        return Response(init_script(openapi_url), media_type="text/javascript; charset=utf-8")

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
