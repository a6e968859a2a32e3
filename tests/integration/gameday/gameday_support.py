"""Running `flagstaff gameday` as a user does (a real process, its own topology of real
processes) at a small size, and reading the report it wrote. Skips locally (fails in CI) when
PostgreSQL's server binaries are missing. Asserts nothing about the scenario itself."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flagstaff_server.regions.postgres_cluster import ClusterError, PostgresBinaries, run_as_user
from support.prerequisites import missing_prerequisite
from support.processes import flagstaff_command, user_environment

RUN_SECONDS = 600
"""A bound on a whole small run (topology start, phases, drain), against a hang: it takes ~2 to
3 minutes on a quiet two-core machine, but at a load average of 20-30 (several engineers' tests
and a CI run beside it) runs were killed at 280 s with their topology still starting."""
INTERRUPT_SECONDS = 60
"""How long an interrupted run may take to stop its topology."""
GAMEDAY = [
    pytest.mark.service,
    pytest.mark.slow,
    pytest.mark.timeout(RUN_SECONDS + INTERRUPT_SECONDS + 30),
]
"""The marks of a game-day test. Its own timeout outlasts the run's bound and the interrupt:
the suite's default (300 s) ended loaded runs first and left the command and its topology
running, orphaned (seen at a load average of ~20: a run's topology took 290 s to start)."""


def run_gameday(
    tmp_path: Path, scenario: str, *, clients: int = 10, duration: float = 12.0
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The finished command and its report.json."""
    try:
        PostgresBinaries.find()
        run_as_user()
    except ClusterError as exc:
        missing_prerequisite(str(exc))
    report = tmp_path / "report"
    argv = [
        *flagstaff_command(),
        *("gameday", scenario, "--clients", str(clients), "--duration", str(duration)),
        *("--report", str(report), "--seed", "7", "--work-dir", str(tmp_path / "work")),
    ]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=user_environment()
    )
    try:
        stdout, stderr = process.communicate(timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        # Ctrl-C, as a user would: the command stops its topology (nodes and private PostgreSQL
        # servers) and writes what it has. A SIGKILL here would leave all of them running.
        process.send_signal(signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=INTERRUPT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        raise AssertionError(
            f"gameday {scenario} still ran after {RUN_SECONDS}s\n{stdout}{stderr}"
        ) from None
    done = subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
    path = report / "report.json"
    assert path.exists(), done.stdout + done.stderr
    body: dict[str, Any] = json.loads(path.read_text())
    return done, body


def failed_checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [check for check in report["checks"] if not check["passed"]]
