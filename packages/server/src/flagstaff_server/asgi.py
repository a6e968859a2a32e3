"""The ASGI interface as types: a scope, a message, the receive and send callables, an app and
response headers. Shared by the server's raw ASGI apps (delivery, client-side delivery, CORS, the
root dispatcher, the UI); types only, nothing that runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]
"""Response headers as ASGI carries them: (lower-case name, value) byte pairs."""
