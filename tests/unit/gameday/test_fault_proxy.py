"""The game day's fault proxy in TCP mode against a loopback echo server: it passes bytes both
ways, a partition drops what flows on an open connection without resetting it and blackholes new
ones, healing resets what the partition held and passes new connections again, a reset fault
refuses at once, and a retarget moves new connections to another server and resets the open."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from flagstaff_server.gameday.fault_proxy import Fault, FaultProxy


@contextmanager
def echo_server(tag: bytes = b"") -> Iterator[int]:
    """A loopback server echoing every byte (upper-cased when `tag` is set), in a thread."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(connection: socket.socket) -> None:
        with connection:
            while data := connection.recv(4096):
                connection.sendall(data.upper() if tag else data)

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def connect(proxy: FaultProxy) -> socket.socket:
    return socket.create_connection(("127.0.0.1", proxy.port), timeout=5)


def echoed(connection: socket.socket, data: bytes) -> bytes:
    connection.sendall(data)
    received = b""
    while len(received) < len(data):
        chunk = connection.recv(4096)
        if not chunk:
            break
        received += chunk
    return received


def test_a_partition_drops_traffic_silently_and_healing_restores_the_link() -> None:
    with echo_server() as port, FaultProxy(port, http=False).running() as proxy:
        held = connect(proxy)
        assert echoed(held, b"before") == b"before"

        proxy.partition()
        held.settimeout(0.5)
        held.sendall(b"lost")
        with pytest.raises(TimeoutError):  # no answer, and no reset either
            held.recv(4096)
        fresh = connect(proxy)  # the kernel accepts; nothing reaches the server
        fresh.settimeout(0.5)
        fresh.sendall(b"nobody")
        with pytest.raises(TimeoutError):
            fresh.recv(4096)

        proxy.heal()
        held.settimeout(5)
        with pytest.raises(ConnectionResetError):  # what the partition held is reset
            held.recv(4096)
        with connect(proxy) as after:
            assert echoed(after, b"after") == b"after"
        held.close()
        fresh.close()
    assert proxy.connections == 3


def test_a_reset_fault_refuses_new_connections_at_once() -> None:
    with echo_server() as port, FaultProxy(port, http=False).running() as proxy:
        proxy.set(Fault("reset"))
        with connect(proxy) as connection, pytest.raises(ConnectionResetError):
            connection.recv(4096)


def test_a_retarget_resets_open_connections_and_sends_new_ones_to_the_other_server() -> None:
    with (
        echo_server() as first,
        echo_server(tag=b"upper") as second,
        FaultProxy(first, http=False).running() as proxy,
    ):
        held = connect(proxy)
        assert echoed(held, b"before") == b"before"

        proxy.retarget(second)
        held.settimeout(5)
        with pytest.raises(ConnectionResetError):
            held.recv(4096)
        with connect(proxy) as moved:
            assert echoed(moved, b"after") == b"AFTER"
        held.close()
