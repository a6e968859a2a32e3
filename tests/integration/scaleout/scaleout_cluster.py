"""Test support for scale-out: `flagstaff serve` as real processes (API and delivery roles) or
in this process, a private PostgreSQL server the test may stop, a Redis database of its own, and
the management calls that seed a project with this module's admin token (the rest of the
management API and the official SDK come from tests/management.py, re-exported here).

Shared by the tests in this directory; asserts nothing about Flagstaff itself.
"""

from __future__ import annotations

import glob
import os
import pwd
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import management
import redis
from flagstaff_server.settings import Settings
from management import create_flag as create_flag
from management import ok as ok
from management import sdk_client as sdk_client
from management import switch
from services import REDIS_URL, redis_client
from services import postgres_database as postgres_database
from support.in_process import serve_flagstaff
from support.ports import free_port
from support.prerequisites import missing_prerequisite
from support.processes import ServeProcess

ADMIN = "scaleout-admin-token-0123456789"
# The stream key every `flagstaff serve` uses; each test gets a Redis database of its own instead.
STREAM_KEY = "flagstaff:changes"
SETTLE_SECONDS = 20.0
"""How long a test waits for a change to reach the nodes and the SDKs."""

# The tests here import `ok`, `create_flag`, `sdk_client` and `postgres_database` from this
# module with the rest of the cluster's parts.


@dataclass(kw_only=True)
class ServerProcess(ServeProcess):
    """One `flagstaff serve` process with the scale-out admin token; its output goes to
    `<data_dir>/server.log`."""

    name: str = "server"
    admin_token: str | None = ADMIN


@contextmanager
def in_process(settings: Settings) -> Iterator[str]:
    """The whole server in this process (uvicorn in a thread): no cold start of its own, for
    tests that need no process boundary. Yields its URL."""
    with serve_flagstaff(settings, stop_timeout=20) as served:
        yield served.url


# PostgreSQL -------------------------------------------------------------------------------------


def postgres_binary(name: str) -> Path | None:
    found = shutil.which(name)
    if found:
        return Path(found)
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return Path(candidates[-1]) if candidates else None


@dataclass
class PrivatePostgres:
    """A PostgreSQL server of this test's own (initdb + pg_ctl in a temporary directory), so the
    test can stop and start it without touching the machine's shared server. initdb refuses to
    run as root, so as root it runs as the `postgres` user."""

    root: Path
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def run(self, *command: str) -> None:
        as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        result = subprocess.run(
            [*as_user, *command],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=self.root,  # a directory the postgres user may enter
        )
        if result.returncode != 0:
            raise AssertionError(f"{command[0]} failed: {result.stdout}\n{result.stderr}")

    def init(self) -> None:
        initdb = postgres_binary("initdb")
        assert initdb is not None
        self.run(
            str(initdb),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "--encoding=UTF8",
            "--locale=C",
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
            "-c full_page_writes=off"
        )
        log = str(self.root / "log")
        self.run(self.pg_ctl, "-D", str(self.data), "-l", log, "-o", options, "-w", "start")

    def stop(self) -> None:
        self.run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")

    @property
    def pg_ctl(self) -> str:
        binary = postgres_binary("pg_ctl")
        assert binary is not None
        return str(binary)

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """Skip locally (fail in CI) when the PostgreSQL server binaries are not installed."""
    if postgres_binary("initdb") is None or postgres_binary("pg_ctl") is None:
        missing_prerequisite("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            missing_prerequisite("as root, PostgreSQL must run as a `postgres` user; none exists")
        if shutil.which("runuser") is None:
            missing_prerequisite("as root, runuser is needed to start PostgreSQL as postgres")
    # not under pytest's tmp_path: its parents are private to the current user
    root = Path(tempfile.mkdtemp(prefix="flagstaff-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    server = PrivatePostgres(root)
    try:
        server.init()
        server.start()
        yield server
    finally:
        if server.running():
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


# Redis ------------------------------------------------------------------------------------------


@contextmanager
def redis_database() -> Iterator[str]:
    """The URL of a Redis logical database whose change stream no other test is using; the
    stream is deleted afterwards. Every `flagstaff serve` uses the same stream key, so separate
    databases keep the tests' sequence numbers apart."""
    base = REDIS_URL.rsplit("/", 1)[0]
    redis_client().close()
    # databases 1-10: bench/delivery takes 11 without claiming it
    for number in random.sample(range(1, 11), 10):
        url = f"{base}/{number}"
        client = redis.Redis.from_url(url, socket_connect_timeout=3)
        # SET NX claims the database; a stream left behind by a crashed run is removed below
        if client.set(f"flagstaff-test:claim:{number}", "1", nx=True, ex=600):
            client.delete(STREAM_KEY)
            try:
                yield url
            finally:
                client.delete(STREAM_KEY, f"flagstaff-test:claim:{number}")
                client.close()
            return
        client.close()
    raise AssertionError("no free Redis database for this test")


def dead_redis_url() -> str:
    """A Redis URL nothing listens on."""
    return f"redis://127.0.0.1:{free_port()}/0"


# the management API ---------------------------------------------------------------------------


def admin_client(url: str) -> httpx.Client:
    """The management API at `url` with this module's admin token."""
    return management.admin_client(url, ADMIN)


def create_project(api: httpx.Client, key: str = "shop") -> str:
    """A project with one environment `production`; returns its SDK key."""
    return management.create_project(api, key).sdk_key


def switch_on(api: httpx.Client, key: str, *, on: bool = True) -> None:
    switch(api, key, on=on)


def switch_off(api: httpx.Client, key: str) -> None:
    switch(api, key, on=False)
