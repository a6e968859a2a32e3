"""The kit's ports: a free port can be bound, and a listening port is taken while held and
accepts connections it never answers."""

from __future__ import annotations

import socket

import pytest
from support.ports import free_port, listening_port


def test_a_free_port_can_be_listened_on() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", free_port()))
        server.listen()


def test_a_listening_port_is_taken_and_connections_to_it_get_no_answer() -> None:
    with listening_port() as port:
        with socket.socket() as other, pytest.raises(OSError, match="in use"):
            other.bind(("127.0.0.1", port))
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.settimeout(0.1)
            with pytest.raises(TimeoutError):
                client.recv(1)
