"""One Flagstaff process of a game-day topology (`flagstaff serve --role ...`): started on a
loopback port it keeps across restarts, ready once `GET /status` answers 200, stopped cleanly,
SIGKILLed, paused (SIGSTOP) and resumed, and sampled for RSS and CPU.

It owns the process and its log file; it knows nothing of scenarios or clients.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from flagstaff_server.regions.postgres_cluster import free_port

START_SECONDS = 300.0
"""A cold start on a busy two-core machine takes several seconds; at a load average of 20-30
four nodes starting at once took nearly three minutes (a 150 s bound failed)."""
STOP_SECONDS = 15.0


class NodeError(RuntimeError):
    """A node did not start, or exited while it was expected to run."""


def flagstaff_argv() -> list[str]:
    """The argv of the `flagstaff` CLI of this interpreter's environment."""
    script = Path(sys.executable).with_name("flagstaff")
    if script.exists():
        return [str(script)]
    return [
        sys.executable,
        "-c",
        "import sys; from flagstaff_server.cli import main; sys.exit(main())",
    ]


@dataclass
class Usage:
    """What a node used over the run: peak resident memory, peak and total CPU."""

    peak_rss_bytes: int = 0
    peak_cpu_percent: float = 0.0
    cpu_seconds: float = 0.0
    _cpu_before: float = 0.0


@dataclass(kw_only=True)
class Node:
    """`flagstaff serve --role <role>` with `args` and `env` on top of a clean environment."""

    name: str
    role: str
    data_dir: Path
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    usage: Usage = field(default_factory=Usage)
    _sampled: psutil.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / f"{self.name}.log"

    def launch(self) -> None:
        """Start the process without waiting (`wait_ready` waits)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            *flagstaff_argv(),
            *("serve", "--role", self.role, "--port", str(self.port)),
            *("--data-dir", str(self.data_dir), "--no-demo", "--shutdown-seconds", "1"),
            *self.args,
        ]
        clean = {k: v for k, v in os.environ.items() if not k.startswith("FLAGSTAFF_")}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env={**clean, **self.env}
            )
        self._sampled = None

    def wait_ready(
        self, timeout: float = START_SECONDS, *, serving: tuple[str, str] | None = None
    ) -> None:
        """Until `/status` answers 200; with `serving` (an SDK key and a flag), until the node
        serves that flag of the key's environment: a delivery node answers `/status` before
        it holds the environment's data, and clients get 503 + `Retry-After` meanwhile."""
        ends = time.monotonic() + timeout
        while not self.answers(serving):
            if self.process is not None and self.process.poll() is not None:
                raise NodeError(f"{self.name} exited with {self.process.returncode}: {self.log()}")
            if time.monotonic() > ends:
                raise NodeError(f"{self.name} did not answer /status within {timeout}s")
            time.sleep(0.05)

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def answers(self, serving: tuple[str, str] | None = None) -> bool:
        """`/status` answers 200, or (`serving`: an SDK key and a flag) the flag is served:
        one flag, which admission control does not count as a full payload."""
        path, headers = "/status", {}
        if serving is not None:
            sdk_key, flag = serving
            path, headers = f"/sdk/flags/{flag}", {"Authorization": sdk_key}
        try:
            with httpx.Client(timeout=2, verify=False) as client:
                return client.get(f"{self.url}{path}", headers=headers).status_code == 200
        except httpx.HTTPError:
            return False

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL when it is not over in time."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        self.resume()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def kill(self) -> None:
        """SIGKILL: a crash or a lost machine, no clean shutdown."""
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP: the process holds its sockets but answers nothing."""
        if self.is_running():
            assert self.process is not None
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.is_running():
            assert self.process is not None
            self.process.send_signal(signal.SIGCONT)

    def sample(self) -> None:
        """Fold the process's current RSS and CPU into `usage` (nothing when it is down)."""
        if not self.is_running():
            self._sampled = None
            return
        assert self.process is not None
        try:
            if self._sampled is None or self._sampled.pid != self.process.pid:
                self._sampled = psutil.Process(self.process.pid)
                self._sampled.cpu_percent(None)
                self.usage._cpu_before = self.usage.cpu_seconds
            rss = self._sampled.memory_info().rss
            cpu = self._sampled.cpu_percent(None)
            times = self._sampled.cpu_times()
        except psutil.Error:
            return
        self.usage.peak_rss_bytes = max(self.usage.peak_rss_bytes, int(rss))
        self.usage.peak_cpu_percent = max(self.usage.peak_cpu_percent, float(cpu))
        self.usage.cpu_seconds = self.usage._cpu_before + float(times.user + times.system)

    def log(self, limit: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:]
        except OSError:
            return "(no log)"
