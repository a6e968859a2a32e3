"""A redis-server of a test's own on a free loopback port, without persistence, that the test may
stop (an outage) and start again (empty): never the machine's shared Redis. A missing
redis-server binary is a missing prerequisite (skipped locally, a failure in CI)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from support.deadlines import wait_until
from support.ports import free_port
from support.prerequisites import missing_prerequisite

DEADLINE = 15.0
"""How long a start or stop may take."""


class PrivateRedis:
    def __init__(self, binary: str, directory: Path) -> None:
        self._binary = binary
        self._directory = directory
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._process = subprocess.Popen(
            [
                self._binary,
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self._directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(
            self.answers, timeout=DEADLINE, interval=0.02, what=f"redis-server on {self.port}"
        )

    def answers(self) -> bool:
        try:
            with redis.Redis.from_url(self.url, socket_connect_timeout=1) as client:
                client.ping()
        except redis.ConnectionError:
            return False
        return True

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=DEADLINE)
            self._process = None


@contextmanager
def private_redis(directory: Path) -> Iterator[PrivateRedis]:
    """A started `PrivateRedis` keeping its working files in `directory`, stopped afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        missing_prerequisite("redis-server is not installed")
        raise AssertionError("unreachable")
    server = PrivateRedis(binary, directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
