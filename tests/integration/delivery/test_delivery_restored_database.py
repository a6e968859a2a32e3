"""A delivery node that was ahead of its database, with real processes: `flagstaff serve --role
api` and `--role delivery` on PostgreSQL and the Redis feed, a relay behind the delivery node, and
clients streaming throughout. The database is restored from a dump taken a few changes earlier
(`pg_restore` in place, as an operator would), `flagstaff dr new-epoch` runs, and the API writes
again. The node resynchronises in full and everything ends with the restored data plus the new
change: no change of the lost history survives anywhere, and on every connection (FDv1 and FDv2,
at the node and at the relay) versions and seqs only go up, except across a full replace.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from ldclient import Context, datasystem
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from support.management import (
    Keys,
    admin_client,
    create_flag,
    create_project,
    served_flags,
    switch,
)
from support.prerequisites import missing_prerequisite
from support.processes import ServeProcess, flagstaff_command, running
from support.services import postgres_database, redis_database

sys.path.insert(0, str(Path(__file__).parent.parent / "relay"))

from relay_support import RelayProcess, relay_config

pytestmark = [pytest.mark.service, pytest.mark.slow]

ADMIN = "epochs-admin-token-0123456789"
SETTLE = 30.0
USER = Context.create("user-1")


@dataclass
class Connection:
    """The events one streaming connection received, in order."""

    number: int
    events: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Recorder:
    """A raw SSE client in a thread that reconnects whenever its stream ends (an FDv2 one with
    the last selector it was given as `basis`, as an SDK does) and keeps every event."""

    url: str
    sdk_key: str
    fdv2: bool
    connections: list[Connection] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=15)

    @property
    def basis(self) -> str | None:
        for connection in reversed(self.connections):
            for name, data in reversed(connection.events):
                if name == "payload-transferred":
                    return str(data["state"])
        return None

    def _run(self) -> None:
        path = "/sdk/stream" if self.fdv2 else "/all"
        while not self.stop.is_set():
            connection = Connection(len(self.connections) + 1)
            basis = self.basis if self.fdv2 else None
            self.connections.append(connection)
            try:
                with httpx.stream(
                    "GET",
                    self.url + path,
                    params={"basis": basis} if basis else None,
                    headers={"Authorization": self.sdk_key},
                    timeout=httpx.Timeout(10, read=70),
                ) as response:
                    if response.status_code != 200:
                        self.stop.wait(0.5)
                        continue
                    name = ""
                    for line in response.iter_lines():
                        if self.stop.is_set():
                            return
                        if line.startswith("event:"):
                            name = line.split(":", 1)[1].strip()
                        elif line.startswith("data:") and name:
                            connection.events.append((name, orjson.loads(line[5:])))
                            name = ""
            except httpx.HTTPError:
                pass
            self.stop.wait(0.2)

    def state(self) -> dict[str, dict[str, Any]]:
        """The flags the last connection's events add up to, checking on every connection that
        a flag's version only goes up between full replaces."""
        flags: dict[str, dict[str, Any]] = {}
        for connection in self.connections:
            flags = (fdv2_state if self.fdv2 else fdv1_state)(connection)
        return flags


def fdv1_state(connection: Connection) -> dict[str, dict[str, Any]]:
    flags: dict[str, dict[str, Any]] = {}
    gone: dict[str, int] = {}
    for name, data in connection.events:
        if name == "put":
            flags, gone = dict(data["data"]["flags"]), {}
            continue
        if name not in ("patch", "delete") or not data["path"].startswith("/flags/"):
            continue
        key = data["path"].removeprefix("/flags/")
        version = data["data"]["version"] if name == "patch" else data["version"]
        held = max(flags.get(key, {}).get("version", 0), gone.get(key, 0))
        assert version > held, f"FDv1 connection {connection.number}: {key} {held} -> {version}"
        if name == "patch":
            flags[key] = data["data"]
        else:
            flags.pop(key, None)
            gone[key] = version
    return flags


def fdv2_state(connection: Connection) -> dict[str, dict[str, Any]]:
    flags: dict[str, dict[str, Any]] = {}
    pending: dict[str, dict[str, Any] | None] = {}
    full, last_commit = False, 0
    for name, data in connection.events:
        if name == "server-intent":
            intent = data["payloads"][0]
            full, pending = intent["intentCode"] == "xfer-full", {}
            assert intent["target"] >= last_commit or full, (connection.number, intent)
        elif name in ("put-object", "delete-object") and data["kind"] == "flag":
            held = flags.get(data["key"], {}).get("version", 0)
            assert full or data["version"] > held, (connection.number, data, held)
            pending[data["key"]] = data.get("object") if name == "put-object" else None
        elif name == "payload-transferred":
            # the selector's version is the seq: it only goes up on a connection
            assert data["version"] > last_commit, (connection.number, data, last_commit)
            last_commit = data["version"]
            if full:
                flags = {}
            for key, item in pending.items():
                if item is None:
                    flags.pop(key, None)
                else:
                    flags[key] = item
            full, pending = False, {}
    return flags


def content(flags: dict[str, dict[str, Any]]) -> dict[str, tuple[bool, int]]:
    """What evaluation sees of each flag here (on, off variation), without its version."""
    return {key: (flag["on"], flag["offVariation"]) for key, flag in flags.items()}


def official_sdk(url: str, sdk_key: str, *, fdv2: bool) -> LDClient:
    settings: dict[str, Any] = {"send_events": False, "diagnostic_opt_out": True}
    if fdv2:
        settings["datasystem_config"] = datasystem.default().build()
    config = Config(sdk_key, base_uri=url, stream_uri=url, events_uri=url, **settings)
    return LDClient(config=config, start_wait=30)


def postgres_binary(name: str) -> Path | None:
    """A PostgreSQL client program: on PATH, or in a versioned Debian directory."""
    found = shutil.which(name)
    if found:
        return Path(found)
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return Path(candidates[-1]) if candidates else None


def run(*command: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f"{command[0]}: {result.stdout}\n{result.stderr}"
    return result.stdout


@contextmanager
def recording(*recorders: Recorder) -> Iterator[None]:
    for recorder in recorders:
        recorder.start()
    try:
        yield
    finally:
        for recorder in recorders:
            recorder.close()


def test_a_node_ahead_of_a_restored_database_ends_with_its_data_and_nothing_goes_backwards(
    tmp_path: Path,
) -> None:
    pg_dump, pg_restore = postgres_binary("pg_dump"), postgres_binary("pg_restore")
    if pg_dump is None or pg_restore is None:
        missing_prerequisite("the PostgreSQL client tools pg_dump and pg_restore")
    assert pg_dump is not None
    assert pg_restore is not None
    with postgres_database("flagstaff_epochs") as database, redis_database() as feed:
        shared = ["--database", database, "--redis", feed]
        api = ServeProcess(
            name="api",
            args=["--role", "api", *shared],
            data_dir=tmp_path / "api",
            admin_token=ADMIN,
        )
        delivery = ServeProcess(
            name="delivery",
            args=["--role", "delivery", *shared],
            data_dir=tmp_path / "delivery",
            admin_token=ADMIN,
        )
        with running(api, delivery), admin_client(api.url, ADMIN) as client:
            keys: Keys = create_project(client)
            for key in ("banner", "checkout"):
                create_flag(client, key)
            switch(client, "banner", on=True)
            wait_until(
                lambda: served_flags(delivery.url, keys.sdk_key).get("banner", {}).get("on"),
                timeout=SETTLE,
                what="the backed-up state served",
            )
            relay = RelayProcess(
                data_dir=tmp_path / "relay", config=relay_config([delivery.url], keys)
            )
            with running(relay):
                recorders = [
                    Recorder(delivery.url, keys.sdk_key, fdv2=False),
                    Recorder(delivery.url, keys.sdk_key, fdv2=True),
                    Recorder(relay.url, keys.sdk_key, fdv2=False),
                    Recorder(relay.url, keys.sdk_key, fdv2=True),
                ]
                sdks = [official_sdk(delivery.url, keys.sdk_key, fdv2=v2) for v2 in (False, True)]
                try:
                    with recording(*recorders):
                        backed_up = served_flags(delivery.url, keys.sdk_key)
                        dump = tmp_path / "backup.dump"
                        run(str(pg_dump), "-Fc", "-f", str(dump), database)

                        # the changes the restore will lose; every client sees them
                        switch(client, "banner", on=False)
                        switch(client, "checkout", on=True)
                        create_flag(client, "lost")
                        wait_until(
                            lambda: (
                                all(sdk.variation("lost", USER, "missing") == "off" for sdk in sdks)
                                and all("lost" in recorder.state() for recorder in recorders)
                            ),
                            timeout=SETTLE,
                            what="the lost changes everywhere",
                        )
                        ahead = served_flags(delivery.url, keys.sdk_key)
                        assert "lost" in ahead

                        api.stop()
                        run(
                            str(pg_restore),
                            "--clean",
                            "--if-exists",
                            "--single-transaction",
                            "--no-owner",
                            "-d",
                            database,
                            str(dump),
                        )
                        new_epoch = run(
                            *flagstaff_command(),
                            "dr",
                            "new-epoch",
                            "--database",
                            database,
                            "--output",
                            "json",
                        )
                        epoch = orjson.loads(new_epoch)
                        assert epoch["epoch"] == 2

                        def restored_everywhere() -> bool:
                            served = served_flags(delivery.url, keys.sdk_key)
                            return content(served) == content(backed_up) and all(
                                content(r.state()) == content(backed_up) for r in recorders
                            )

                        wait_until(restored_everywhere, timeout=SETTLE, what="the restored data")
                        assert delivery.status()["parts"]["delivery"]["epoch"] == 2

                        api.start()
                        switch(client, "checkout", on=True)  # the first change of epoch 2
                        expected = {**content(backed_up), "checkout": (True, 1)}

                        def final_everywhere() -> bool:
                            served = served_flags(delivery.url, keys.sdk_key)
                            return (
                                content(served) == expected
                                and all(content(r.state()) == expected for r in recorders)
                                and all(
                                    sdk.variation("checkout", USER, "x") == "on"
                                    and sdk.variation("banner", USER, "x") == "on"
                                    and sdk.variation("lost", USER, "missing") == "missing"
                                    for sdk in sdks
                                )
                            )

                        wait_until(final_everywhere, timeout=SETTLE, what="the final data")
                        final = served_flags(delivery.url, keys.sdk_key)
                finally:
                    for sdk in sdks:
                        sdk.close()
            metrics = httpx.get(f"{delivery.url}/metrics", timeout=10).text

    # the new change's version is above every version the lost history handed out
    assert final["checkout"]["version"] > ahead["checkout"]["version"]
    assert final["banner"]["version"] == backed_up["banner"]["version"]
    assert "flagstaff_delivery_resyncs_total 1" in metrics
    # every check of `state()` above also asserted the per-connection order; each recorder
    # was connected throughout, so its last state is the final data
    for recorder in recorders:
        assert content(recorder.state()) == expected, recorder
    # the node's own streams stayed open and got the restored data in full on them
    v1_first, v2_first = recorders[0].connections[0], recorders[1].connections[0]
    assert [name for name, _ in v1_first.events].count("put") == 2
    intents = [d["payloads"][0]["intentCode"] for n, d in v2_first.events if n == "server-intent"]
    assert intents == ["xfer-full", "xfer-full"]
