"""Processes the benchmarks start and wait for: free loopback ports, polling with a deadline,
`flagstaff serve` of this venv on a throwaway data directory, up once `GET /status` answers 200,
and throwaway PostgreSQL databases.

Shared by the bench modules (bench/ingest.py keeps its own for now); measures nothing itself.
A failure to start raises RuntimeError naming what was awaited.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg

POSTGRES_ADMIN_URL = os.environ.get(
    "FLAGSTAFF_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
"""Where throwaway databases are created (and dropped)."""
START_SECONDS = 60.0
"""How long a cold `flagstaff serve` start may take on a busy two-core machine."""


@contextmanager
def postgres_database(prefix: str = "flagstaff_bench") -> Iterator[str]:
    """The URL of a new database `<prefix>_<random>` on `POSTGRES_ADMIN_URL`'s server, dropped
    afterwards; psycopg.OperationalError when that server cannot be reached."""
    admin = psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=3)
    name = f"{prefix}_{secrets.token_hex(4)}"
    admin.execute(f'CREATE DATABASE "{name}"')
    info = admin.info
    try:
        yield f"postgresql://{info.user}@{info.host}:{info.port}/{name}"
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def free_port() -> int:
    """A loopback TCP port nothing listened on a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until(
    predicate: Callable[[], object], *, timeout: float, what: str, interval: float = 0.1
) -> None:
    """Poll `predicate` until it returns something true; raise RuntimeError naming `what` after
    `timeout` seconds. Exceptions of the predicate propagate."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def accepts(port: int) -> bool:
    """Whether something accepts TCP connections on loopback `port` now."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def answers(url: str, *, headers: Mapping[str, str] | None = None) -> httpx.Response | None:
    """`GET url` when it answers 200, else None (any other status, or no answer). The client
    builds no TLS context (plain HTTP on loopback): `httpx.get` builds one per call, ~60 ms of
    CPU, and a readiness poll every 20 ms would take a core from the server it waits for (and
    from the start-up times bench/ingest measures)."""
    try:
        with httpx.Client(timeout=2, verify=False) as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError:
        return None
    return response if response.status_code == 200 else None


def flagstaff_command() -> list[str]:
    """The argv of this venv's `flagstaff` CLI, to which the caller appends a subcommand."""
    return [str(Path(sys.executable).with_name("flagstaff"))]


def stop(process: subprocess.Popen[bytes], *, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if the process is still there after `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass(frozen=True, slots=True)
class Served:
    """A running `flagstaff serve`: its base URL, process and data directory."""

    url: str
    process: subprocess.Popen[bytes]
    data_dir: Path


@contextmanager
def flagstaff_serve(
    *options: str, env: Mapping[str, str], timeout: float = START_SECONDS
) -> Iterator[Served]:
    """`flagstaff serve` on a free port with a temporary data directory (removed afterwards), no
    demo project and warnings-only logging to `<data_dir>/server.log`; `options` are further
    options (`--database ...`), `env` is added to this process's environment. Yields once
    `/status` answers 200; raises RuntimeError with the log if the server exits first."""
    with tempfile.TemporaryDirectory(
        prefix="flagstaff-bench-", ignore_cleanup_errors=True
    ) as directory:
        data_dir = Path(directory)
        port = free_port()
        command = [
            *flagstaff_command(),
            *("serve", "--port", str(port), "--data-dir", str(data_dir)),
            *("--no-demo", "--log-level", "warning", *options),
        ]
        log_path = data_dir / "server.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT
            )
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"flagstaff serve exited:\n{log_path.read_text()}")
            return answers(f"{url}/status") is not None

        try:
            wait_until(up, timeout=timeout, what=f"flagstaff serve to answer {url}/status")
            yield Served(url=url, process=process, data_dir=data_dir)
        finally:
            stop(process)
