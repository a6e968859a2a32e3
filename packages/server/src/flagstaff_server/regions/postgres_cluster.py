"""Private PostgreSQL servers in streaming replication: a primary (initdb) and hot standbys
(pg_basebackup -R -X stream), each on its own loopback port and data directory, that can be
stopped, killed, promoted, and rejoined to a new primary with pg_rewind.

What the region tests, bench/regions and `flagstaff gameday` start, so it lives in the product.
It never touches a server it did not create. Linux only (process groups, /proc). As root the
servers run as the `postgres` user (initdb refuses root), through `runuser`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

# Replication-ready, real (fsync on, full page writes) and small: a test machine runs several.
# wal_log_hints lets pg_rewind turn an old primary into a standby of the new one; the standby
# reports replay every second and retries a lost primary every second, so lag figures and
# reconnection are quick; WAL is kept for a standby that falls behind, with no archive.
SERVER_SETTINGS: Mapping[str, str] = {
    "listen_addresses": "'127.0.0.1'",
    "shared_buffers": "'16MB'",
    "max_connections": "200",
    "wal_level": "replica",
    "max_wal_senders": "10",
    "wal_keep_size": "'256MB'",
    "max_wal_size": "'256MB'",
    "min_wal_size": "'32MB'",
    "wal_log_hints": "on",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "archive_mode": "off",
    "hot_standby": "on",
    "hot_standby_feedback": "on",
    "wal_receiver_status_interval": "'1s'",
    "wal_retrieve_retry_interval": "'1s'",
    "logging_collector": "off",
}

SUPERUSER = "postgres"
START_TIMEOUT_SECONDS = 60.0
_POLL_SECONDS = 0.02
_START_ATTEMPTS = 3


class ClusterError(RuntimeError):
    """A PostgreSQL tool failed or a server did not reach the awaited state in time; the message
    carries the tool's output or what was awaited."""


@dataclass(frozen=True, slots=True)
class PostgresBinaries:
    """Where the server programs (initdb, pg_ctl, pg_basebackup, pg_rewind) are."""

    bindir: Path

    def tool(self, name: str) -> str:
        path = self.bindir / name
        if not path.is_file():
            raise ClusterError(f"{name} not found in {self.bindir}")
        return str(path)

    @classmethod
    def find(cls) -> PostgresBinaries:
        """`pg_config --bindir` when it holds the server programs (Debian's client-only
        pg_config does not), else the newest /usr/lib/postgresql/N/bin."""
        candidates: list[Path] = []
        pg_config = shutil.which("pg_config")
        if pg_config:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                out = subprocess.run(
                    [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
                )
                candidates.append(Path(out.stdout.strip()))
        candidates += [
            Path(p)
            for p in sorted(
                glob.glob("/usr/lib/postgresql/*/bin"),
                key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
                reverse=True,
            )
        ]
        for bindir in candidates:
            if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
                return cls(bindir)
        raise ClusterError("PostgreSQL server binaries (initdb, pg_ctl) are not installed")


def free_port() -> int:
    """A loopback port nothing listened on a moment ago (a guess; `start` moves to another one
    when the server finds it taken)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def run_as_user() -> str | None:
    """The user the servers run as: `postgres` when this process is root, else None (itself)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise ClusterError(
            "as root, PostgreSQL must run as a `postgres` user; none exists"
        ) from None
    if shutil.which("runuser") is None:
        raise ClusterError("as root, runuser is needed to start PostgreSQL as postgres")
    return SUPERUSER


@dataclass(kw_only=True)
class PostgresInstance:
    """One server of the cluster: its data directory, port and log live under `root`."""

    name: str
    root: Path
    binaries: PostgresBinaries
    run_as: str | None
    port: int = field(default_factory=free_port)
    started_once: bool = False

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_path(self) -> Path:
        return self.root / "server.log"

    @property
    def url(self) -> str:
        """The URL Flagstaff (`--database`) and `flagstaff dr` take."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    @property
    def conninfo(self) -> str:
        """libpq connection string of this server, as a standby's primary_conninfo holds it."""
        return f"host=127.0.0.1 port={self.port} user={SUPERUSER}"

    # processes ---------------------------------------------------------------------------------

    def run(self, *command: str, timeout: float = 120.0) -> str:
        """Run a PostgreSQL tool as the cluster's user; its output, or ClusterError."""
        prefix = ["runuser", "-u", self.run_as, "--"] if self.run_as else []
        try:
            result = subprocess.run(
                [*prefix, *command],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                cwd=self.root,  # a directory the server's user may enter
            )
        except subprocess.TimeoutExpired as exc:
            raise ClusterError(f"{Path(command[0]).name} did not finish in {timeout}s") from exc
        if result.returncode != 0:
            raise ClusterError(
                f"{Path(command[0]).name} failed ({result.returncode}): "
                f"{result.stdout.strip()} {result.stderr.strip()}".strip()
            )
        return result.stdout

    def start(self, *, timeout: float = START_TIMEOUT_SECONDS) -> None:
        """Start and wait until it accepts connections (a standby: read-only ones). A first start
        whose port another process took meanwhile moves to a new port; a restart keeps its port,
        since standbys and clients were told it."""
        for _attempt in range(_START_ATTEMPTS):
            options = f"-p {self.port} -k {self.root}"
            try:
                self.run(
                    self.binaries.tool("pg_ctl"),
                    *("-D", str(self.data_dir), "-l", str(self.log_path)),
                    *("-o", options, "-w", "-t", str(round(timeout)), "start"),
                    timeout=timeout + 10,
                )
            except ClusterError as exc:
                if self.started_once or "could not bind" not in self.log_tail():
                    raise ClusterError(f"{self.name}: {exc}; log: {self.log_tail()}") from None
                self.port = free_port()
                continue
            self.started_once = True
            return
        raise ClusterError(f"{self.name} found no free port")

    def stop(self, mode: str = "fast") -> None:
        """A clean shutdown (`fast`: roll back open transactions, checkpoint, exit)."""
        if self.is_running():
            self.run(self.binaries.tool("pg_ctl"), "-D", str(self.data_dir), "-m", mode, "stop")

    def kill(self) -> None:
        """SIGKILL to the postmaster and every backend at once: a lost machine. The next start
        runs crash recovery. pg_ctl starts the postmaster in a session of its own, so its process
        group is exactly the server's processes."""
        pid = self.postmaster_pid()
        if pid is None or not _alive(pid):
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        # until reaped, not merely dead: the next postmaster (or pg_rewind's single-user run)
        # takes a zombie's pid in postmaster.pid for a live server
        deadline = time.monotonic() + 30
        while _group_exists(pid):
            if time.monotonic() > deadline:
                raise ClusterError(f"{self.name}: processes of group {pid} outlived SIGKILL")
            time.sleep(_POLL_SECONDS)

    def postmaster_pid(self) -> int | None:
        try:
            first = (self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        except (OSError, PermissionError):
            return None
        return int(first) if first.strip().isdigit() else None

    def is_running(self) -> bool:
        pid = self.postmaster_pid()
        return pid is not None and _alive(pid)

    def log_tail(self, limit: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:]
        except OSError:
            return "(no log)"

    # SQL ---------------------------------------------------------------------------------------

    def connect(self, *, timeout: float = 5.0) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, round(timeout)))

    def value(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """The first column of the first row of `sql` (None for no row)."""
        with self.connect() as connection:
            row = connection.execute(sql, params).fetchone()
            return None if row is None else row[0]

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        with self.connect() as connection:
            connection.execute(sql, params)

    def in_recovery(self) -> bool:
        return bool(self.value("SELECT pg_is_in_recovery()"))

    def wal_lsn(self) -> str:
        """Where this server's WAL is: the insert position on a primary, the replayed position on
        a standby."""
        return str(
            self.value(
                "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                "ELSE pg_current_wal_lsn() END"
            )
        )

    def timeline(self) -> int:
        """The timeline this server writes (a primary) or replays (a standby)."""
        if self.in_recovery():
            received = self.value("SELECT received_tli FROM pg_stat_wal_receiver")
            if received is not None:
                return int(received)
            return int(self.value("SELECT timeline_id FROM pg_control_checkpoint()"))
        walfile = str(self.value("SELECT pg_walfile_name(pg_current_wal_lsn())"))
        return int(walfile[:8], 16)

    def wait_for_replay(self, lsn: str, *, timeout: float = 30.0) -> None:
        """Block until this standby has replayed the WAL up to `lsn` (a primary's `wal_lsn`)."""
        sql = "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s::pg_lsn) >= 0"
        self._wait(lambda: bool(self.value(sql, (lsn,))), timeout, f"replay to reach {lsn}")

    def wait_streaming(self, *, timeout: float = 30.0) -> None:
        """Block until this standby's WAL receiver streams from its primary."""
        sql = "SELECT status = 'streaming' FROM pg_stat_wal_receiver"
        self._wait(lambda: bool(self.value(sql)), timeout, "the WAL receiver to stream")

    def promote(self, *, timeout: float = 60.0) -> None:
        """End recovery: this standby becomes a primary on a new timeline (pg_ctl promote -w)."""
        self.run(
            self.binaries.tool("pg_ctl"),
            *("-D", str(self.data_dir), "-w", "-t", str(round(timeout)), "promote"),
            timeout=timeout + 10,
        )

    def _wait(self, done: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if done():
                    return
            except psycopg.Error as exc:
                last_error = exc
            time.sleep(_POLL_SECONDS)
        raise ClusterError(f"{self.name}: {what} did not happen within {timeout}s ({last_error})")


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not: nobody may reap a reparented postmaster)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _group_exists(group: int) -> bool:
    """Whether any process of `group` is still in the process table (zombies included)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        # the fields after the command name: state, ppid, pgrp, ...
        if int(fields[2]) == group:
            return True
    return False


class PostgresCluster:
    """A primary and its standbys under one temporary directory. `close` (or the end of a `with`
    block) stops every server it started and removes the directory."""

    def __init__(
        self,
        *,
        binaries: PostgresBinaries | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.binaries = binaries or PostgresBinaries.find()
        self.run_as = run_as_user()
        self.settings = {**SERVER_SETTINGS, **(settings or {})}
        # not under a caller's private temporary directory: the server's user must enter it
        self.root = Path(tempfile.mkdtemp(prefix="flagstaff-pg-cluster-"))
        self._chown(self.root)
        self.instances: list[PostgresInstance] = []

    def __enter__(self) -> PostgresCluster:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _chown(self, path: Path) -> None:
        if self.run_as:
            shutil.chown(path, self.run_as, self.run_as)

    def _new_instance(self, name: str) -> PostgresInstance:
        if any(instance.name == name for instance in self.instances):
            raise ClusterError(f"the cluster already has a server named {name!r}")
        root = self.root / name
        root.mkdir()
        self._chown(root)
        instance = PostgresInstance(
            name=name, root=root, binaries=self.binaries, run_as=self.run_as
        )
        self.instances.append(instance)
        return instance

    def start_primary(self, name: str = "a") -> PostgresInstance:
        """A new database cluster (initdb), configured for replication, started."""
        instance = self._new_instance(name)
        instance.run(
            self.binaries.tool("initdb"),
            *("-D", str(instance.data_dir), "-U", SUPERUSER, "--auth=trust"),
            # initdb's own final fsync only; the server itself runs with fsync on
            *("--no-sync", "--encoding=UTF8", "--locale=C"),
        )
        with (instance.data_dir / "postgresql.conf").open("a") as conf:
            conf.write("\n# flagstaff_server.regions.postgres_cluster\n")
            for key, value in self.settings.items():
                conf.write(f"{key} = {value}\n")
        instance.start()
        return instance

    def start_standby(self, primary: PostgresInstance, name: str = "b") -> PostgresInstance:
        """A hot standby of `primary`: a base backup with its WAL streamed alongside (-X stream),
        standby.signal and primary_conninfo written (-R), started and streaming."""
        instance = self._new_instance(name)
        instance.run(
            self.binaries.tool("pg_basebackup"),
            *("-D", str(instance.data_dir), "-d", _conninfo(primary, application_name=name)),
            *("-R", "-X", "stream", "-c", "fast", "--no-sync"),
        )
        instance.start()
        instance.wait_streaming()
        return instance

    def rejoin(self, old_primary: PostgresInstance, new_primary: PostgresInstance) -> None:
        """Turn the stopped (or killed) `old_primary` into a standby of `new_primary`: pg_rewind
        rewinds its data directory to where the timelines forked (running crash recovery first
        when it was killed), writes standby.signal and primary_conninfo; then it starts and
        streams. Whatever the old primary committed after the fork is discarded."""
        if old_primary.is_running():
            old_primary.stop()
        # pg_rewind reads the source's timeline from its control file, which a promotion updates
        # only at the next checkpoint; before it, the old primary looks "on the same timeline"
        # and is left unrewound (then it cannot follow the new timeline)
        new_primary.execute("CHECKPOINT")
        old_primary.run(
            self.binaries.tool("pg_rewind"),
            *("--target-pgdata", str(old_primary.data_dir)),
            *("--source-server", _conninfo(new_primary, application_name=old_primary.name)),
            "--write-recovery-conf",
            timeout=300,
        )
        old_primary.start()
        old_primary.wait_streaming()

    def close(self) -> None:
        for instance in reversed(self.instances):
            with contextlib.suppress(ClusterError):
                if instance.is_running():
                    instance.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _conninfo(primary: PostgresInstance, *, application_name: str) -> str:
    # the standby's name shows in the primary's pg_stat_replication (and `flagstaff dr status`)
    return f"{primary.conninfo} application_name={application_name}"
