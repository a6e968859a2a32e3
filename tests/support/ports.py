"""Loopback ports for tests: one nothing listens on, and one this process holds listening without
ever answering (a port another server cannot take; an endpoint that accepts and stays silent)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    """A loopback TCP port nothing listened on a moment ago (a guess: another process may take it
    before the caller binds it; `processes.FlagstaffProcess` moves to a new one when that
    happens)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def listening_port() -> Iterator[int]:
    """A loopback port a socket of this process listens on until the end of the block, never
    accepting: a server told to use it finds it taken, and a client's connections are opened by
    the kernel and then never answered."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port: int = held.getsockname()[1]
        yield port
