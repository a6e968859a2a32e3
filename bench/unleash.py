"""unleash-server as a polling peer for `bench.delivery`: installed with npm under
`build/bench/unleash` at bench time (never committed), run on a throwaway PostgreSQL database,
given an equivalent flag set through its admin API. `Unavailable` says why it cannot run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import psycopg

from bench.servers import free_port, postgres_database, stop

VERSION = "7.5.1"
"""The newest line that runs on Node 20 (unleash-server 8 needs Node 22)."""
HOME = Path("build/bench/unleash")
ADMIN_TOKEN = "*:*.bench-admin-secret"
CLIENT_TOKEN = "default:development.bench-client-secret"
START = "require('unleash-server').start().catch((e) => { console.error(e); process.exit(1); });"


class Unavailable(Exception):
    """npm, Node or PostgreSQL could not give us a running unleash-server."""


def install() -> Path:
    package = HOME / "node_modules" / "unleash-server" / "package.json"
    if package.exists() and f'"version": "{VERSION}"' in package.read_text():
        return HOME
    if shutil.which("npm") is None:
        raise Unavailable("npm is not installed")
    HOME.mkdir(parents=True, exist_ok=True)
    if not (HOME / "package.json").exists():
        (HOME / "package.json").write_text('{"name": "unleash-bench", "private": true}\n')
    result = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", f"unleash-server@{VERSION}"],
        cwd=HOME,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if result.returncode != 0:
        raise Unavailable(f"npm install failed: {result.stderr.strip()[-300:]}")
    return HOME


@contextmanager
def database() -> Iterator[str]:
    with ExitStack() as stack:
        try:
            url = stack.enter_context(postgres_database("unleash_bench"))
        except psycopg.Error as exc:
            raise Unavailable(f"PostgreSQL unreachable: {exc}") from exc
        # the scheme unleash-server's own documentation writes
        yield url.replace("postgresql://", "postgres://", 1)


@contextmanager
def running(flags: int) -> Iterator[tuple[str, str]]:
    """A seeded unleash-server; yields its URL and a client token for `/api/client/features`."""
    home = install()
    port = free_port()
    with database() as url:
        environment = {
            **os.environ,
            "DATABASE_URL": url,
            "DATABASE_SSL": "false",
            "HTTP_PORT": str(port),
            "HTTP_HOST": "127.0.0.1",
            "LOG_LEVEL": "error",
            "INIT_ADMIN_API_TOKENS": ADMIN_TOKEN,
            "INIT_CLIENT_API_TOKENS": CLIENT_TOKEN,
            "NODE_ENV": "production",
        }
        log = (home / "server.log").open("wb")
        process = subprocess.Popen(
            ["node", "-e", START], cwd=home, env=environment, stdout=log, stderr=log
        )
        base = f"http://127.0.0.1:{port}"
        try:
            ready(process, base)
            seed(base, flags)
            yield base, CLIENT_TOKEN
        finally:
            stop(process, timeout=15)
            log.close()


def ready(process: subprocess.Popen[bytes], base: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Unavailable(f"unleash-server exited; see {HOME / 'server.log'}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise Unavailable("unleash-server did not become healthy in 120 s")


def seed(base: str, flags: int) -> None:
    """`flags` flags, each on in `development` with one rollout strategy whose variant carries
    the same 400-character padding value as the Flagstaff bench flags."""
    project = "/api/admin/projects/default/features"
    with httpx.Client(base_url=base, headers={"Authorization": ADMIN_TOKEN}, timeout=30) as api:
        for index in range(flags):
            name = f"f{index}"
            api.post(project, json={"name": name, "type": "release"}).raise_for_status()
            strategy = {
                "name": "flexibleRollout",
                "constraints": [],
                "parameters": {"rollout": "100", "stickiness": "default", "groupId": name},
                "variants": [
                    {
                        "name": "padding",
                        "weight": 1000,
                        "weightType": "variable",
                        "stickiness": "default",
                        "payload": {"type": "string", "value": "x" * 400},
                    }
                ],
            }
            env = f"{project}/{name}/environments/development"
            api.post(f"{env}/strategies", json=strategy).raise_for_status()
            api.post(f"{env}/on").raise_for_status()
