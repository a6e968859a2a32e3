"""`flagstaff serve` as a real process on a real socket: it starts on a fresh data directory, prints
where to go, answers with the admin token it printed, and exits cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from support.ports import free_port, listening_port
from support.processes import flagstaff_command, user_environment, wait_for_status

START_DEADLINE_SECONDS = 60.0
STOP_DEADLINE_SECONDS = 30.0


@pytest.mark.slow
def test_serve_starts_answers_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [*flagstaff_command(), "serve", "--port", str(port), "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=user_environment(),
    )
    try:
        wait_for_status(base, process, timeout=START_DEADLINE_SECONDS)
        status = httpx.get(f"{base}/status").json()
        assert status["ready"] is True
        assert status["parts"]["store"]["backend"] == "sqlite"
        secret = (tmp_path / "data" / "admin-token").read_text().strip()
        projects = httpx.get(f"{base}/api/v2/projects", headers={"Authorization": secret})
        assert projects.status_code == 200
        assert [item["key"] for item in projects.json()["items"]] == ["demo"]
        environment = httpx.get(
            f"{base}/api/v2/projects/demo/environments/production",
            headers={"Authorization": f"Bearer {secret}"},
        ).json()
        sdk = httpx.get(f"{base}/sdk/latest-all", headers={"Authorization": environment["apiKey"]})
        assert sdk.status_code == 200
        assert sdk.json()["flags"]
        events = httpx.post(
            f"{base}/bulk", headers={"Authorization": environment["apiKey"]}, json=[]
        )
        assert events.status_code == 202
        # SDKs read Date as the server's clock; a second Date header would be joined into an
        # unparseable value by their HTTP clients.
        assert len(events.headers.get_list("date")) == 1
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=STOP_DEADLINE_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, output
    assert secret in output
    assert environment["apiKey"] in output
    assert f"running at {base}" in output
    assert "Application shutdown complete" in output


@pytest.mark.slow
def test_serve_that_cannot_start_says_why_and_exits_1(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            *flagstaff_command(),
            "serve",
            "--port",
            str(free_port()),
            "--data-dir",
            str(tmp_path),
            "--database",
            "mysql://db.example/flags",
        ],
        capture_output=True,
        text=True,
        timeout=START_DEADLINE_SECONDS,
        check=False,
    )
    assert result.returncode == 1
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line == (
        "flagstaff serve: the server did not start: unsupported database 'mysql': "
        "use sqlite:///PATH or postgresql://..."
    )
    assert "Traceback" not in result.stderr


def test_serve_on_a_taken_port_says_so_before_making_anything(tmp_path: Path) -> None:
    with listening_port() as port:
        result = subprocess.run(
            [*flagstaff_command(), "serve", "--port", str(port), "--data-dir", str(tmp_path / "d")],
            capture_output=True,
            text=True,
            timeout=START_DEADLINE_SECONDS,
            check=False,
            env=user_environment(),
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"flagstaff serve: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(another server? --port chooses another)"
    ]
    # no banner claiming it runs, and no admin token printed for a server that never ran
    assert "running at" not in result.stdout
    assert not (tmp_path / "d").exists()
