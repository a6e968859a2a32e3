"""`flagstaff relay` as a real process: a port that is taken is one line and exit 1, before the
relay makes its data directory or says anything about serving."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.ports import listening_port
from support.processes import flagstaff_command, user_environment

REPOSITORY = Path(__file__).resolve().parents[3]
DEMO_DATA = REPOSITORY / "docs" / "examples" / "demo-flags.json"


def test_relay_on_a_taken_port_says_so_before_making_anything(tmp_path: Path) -> None:
    config = tmp_path / "relay.toml"
    config.write_text(
        "[environments.production]\n"
        'sdk_key = "sdk-00000000-0000-0000-0000-000000000000"\n'
        f"offline_file = {str(DEMO_DATA)!r}\n",
        encoding="utf-8",
    )
    with listening_port() as port:
        result = subprocess.run(
            [
                *flagstaff_command(),
                "relay",
                "--config",
                str(config),
                "--port",
                str(port),
                "--data-dir",
                str(tmp_path / "state"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=user_environment(),
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"flagstaff relay: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(another server? --port chooses another)"
    ]
    assert not (tmp_path / "state").exists()
