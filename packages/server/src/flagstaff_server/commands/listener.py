"""The listening sockets of `flagstaff serve` and `flagstaff relay`, bound before the app starts:
a taken port then fails at once with one line, before a data directory, demo project or admin
token is made and before anything says the server is running."""

from __future__ import annotations

import errno
import socket

from flagstaff_server.commands.error import CommandError


def bind_listeners(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of `host` (as asyncio's `create_server` binds them), for
    uvicorn's `run(sockets=...)`; a taken port or unknown host is a `CommandError`."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    listeners: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(addresses):
            listener = socket.socket(family, kind, proto)
            listeners.append(listener)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listener.bind(address)
    except OSError as exc:
        for listener in listeners:
            listener.close()
        hint = " (another server? --port chooses another)" if exc.errno == errno.EADDRINUSE else ""
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from exc
    return listeners
