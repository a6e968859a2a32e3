"""The `flagstaff` CLI of this venv as real processes: its argv, the environment a user's shell
would give it, clean stops, and `flagstaff` servers on loopback ports they keep across restarts,
up once `GET /status` answers 200 (`FlagstaffProcess`, `ServeProcess`, `running`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from support.deadlines import wait_until
from support.ports import free_port

START_TIMEOUT = 90.0
"""A cold `flagstaff` start on a busy two-core machine takes several seconds."""
STOP_TIMEOUT = 20.0
"""How long a process gets to shut down cleanly after SIGTERM before it is killed."""


FLAGSTAFF_SCRIPT = Path(sys.executable).with_name("flagstaff")
"""The `flagstaff` script `make install` puts in this venv."""


def flagstaff_command() -> list[str]:
    """The argv that runs this venv's `flagstaff` CLI (its script, or the module when the script
    is missing), to which the caller appends a subcommand and its options."""
    if FLAGSTAFF_SCRIPT.exists():
        return [str(FLAGSTAFF_SCRIPT)]
    code = "import sys; from flagstaff_server.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code]


def user_environment() -> dict[str, str]:
    """This process's environment without its FLAGSTAFF_ variables: what a user's shell gives a
    `flagstaff` command (say `make run`), so the test runner's settings do not leak in."""
    return {k: v for k, v in os.environ.items() if not k.startswith("FLAGSTAFF_")}


def stop_process(process: subprocess.Popen[Any], *, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM (a clean shutdown), then SIGKILL if it is not over within `timeout` seconds."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def loopback_get(url: str, *, timeout: float) -> httpx.Response:
    """`GET url` (plain HTTP on loopback) on a connection of its own, read whole. Unlike
    `httpx.get` it builds no TLS context: the default one costs ~50 ms of CPU, so a readiness
    poll every 20 ms kept a core of a two-core machine busy while the server it waited for was
    starting."""
    with httpx.Client(timeout=timeout, verify=False) as client:
        return client.get(url)


def status_answers(url: str) -> bool:
    """Whether `GET {url}/status` answers 200 now."""
    try:
        return loopback_get(f"{url}/status", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def wait_for_status(
    url: str,
    process: subprocess.Popen[Any],
    *,
    timeout: float = START_TIMEOUT,
    what: str = "flagstaff serve",
) -> None:
    """Wait until the server `process` runs answers `GET {url}/status` with 200; fail at once
    when the process exits, and after `timeout` seconds."""

    def up() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"{what} exited with {process.returncode}")
        return status_answers(url)

    wait_until(up, timeout=timeout, what=f"{what} to answer {url}/status", interval=0.05)


class PortTaken(Exception):
    """The process could not listen: another process took its port first."""


@dataclass(kw_only=True)
class FlagstaffProcess:
    """One `flagstaff` process on a loopback port it keeps across restarts, up once `/status`
    answers 200; its output goes to `<data_dir>/<name>.log`. Subclasses say which subcommand."""

    data_dir: Path
    name: str = "flagstaff"
    admin_token: str | None = None
    """FLAGSTAFF_ADMIN_TOKEN of the process (unset: inherited from this one)."""
    env: dict[str, str] = field(default_factory=dict)
    inherit_flagstaff_variables: bool = True
    """False: none of this process's FLAGSTAFF_ variables reach the child (a server started the
    way a user starts it, say `make run`); `admin_token` and `env` still apply."""
    port: int = field(default_factory=free_port)
    start_timeout: float = START_TIMEOUT
    process: subprocess.Popen[bytes] | None = None
    started_once: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / f"{self.name}.log"

    @property
    def label(self) -> str:
        """How failures name this process."""
        return self.name

    def arguments(self) -> list[str]:
        """The subcommand and its options (after `flagstaff`)."""
        raise NotImplementedError

    def launch(self) -> None:
        """Start the process without waiting for it (see `running`)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        token = {} if self.admin_token is None else {"FLAGSTAFF_ADMIN_TOKEN": self.admin_token}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*flagstaff_command(), *self.arguments()],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**self.inherited_environment(), **token, **self.env},
            )

    def inherited_environment(self) -> dict[str, str]:
        return dict(os.environ) if self.inherit_flagstaff_variables else user_environment()

    def start(self) -> None:
        self.launch()
        self.wait_started()

    def wait_started(self) -> None:
        """Wait for this process to listen on its port and answer `/status`. A first start whose
        port another process took in the meantime (free_port is only a guess on a busy machine)
        moves to a new port; a restart keeps its port, since others were told it."""
        for _attempt in range(3):
            try:
                wait_until(
                    self.answers,
                    timeout=self.start_timeout,
                    what=f"{self.label} to start",
                    interval=0.02,
                )
            except PortTaken:
                if self.started_once:
                    raise AssertionError(f"{self.label}: port {self.port} was taken") from None
                self.port = free_port()
                self.launch()
                continue
            except AssertionError as exc:
                raise AssertionError(f"{exc}; log: {self.log()}") from None
            self.started_once = True
            return
        raise AssertionError(f"{self.label} found no free port")

    def answers(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            if "address already in use" in self.log().lower():
                raise PortTaken(self.port)
            raise AssertionError(f"{self.label} exited: {self.log()}")
        # whatever answers on the port must be this process; the status request goes first
        # since it is the cheap check (psutil reads every socket of the machine)
        return status_answers(self.url) and self.listening()

    def listening(self) -> bool:
        assert self.process is not None
        try:
            connections = psutil.Process(self.process.pid).net_connections(kind="tcp")
        except psutil.Error:
            return False
        return any(
            c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == self.port
            for c in connections
        )

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = loopback_get(f"{self.url}/status", timeout=5).json()
        return body

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)

    def kill(self) -> None:
        """SIGKILL: no clean shutdown (a crash, a lost machine)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def crash_and_restart(self) -> None:
        """SIGKILL, then start again on the same port and wait until it answers."""
        self.kill()
        self.launch()
        self.wait_started()

    def rss(self) -> int:
        assert self.process is not None
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def log(self) -> str:
        """The end of the process's output."""
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no log)"


@dataclass(kw_only=True)
class ServeProcess(FlagstaffProcess):
    """`flagstaff serve` on a fresh (or kept) data directory without the demo project, quick to
    shut down; `args` are further options (`--role`, `--database`, ...)."""

    args: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return " ".join([self.name, *self.args])

    def arguments(self) -> list[str]:
        return [
            "serve",
            *("--port", str(self.port), "--data-dir", str(self.data_dir)),
            *("--no-demo", "--shutdown-seconds", "1"),
            *self.args,
        ]


@contextmanager
def running(*processes: FlagstaffProcess) -> Iterator[None]:
    """The processes, started side by side (a cold start takes seconds), stopped at the end (even
    after a failure)."""
    try:
        for process in processes:
            process.launch()
        for process in processes:
            process.wait_started()
        yield
    finally:
        for process in processes:
            process.stop()
