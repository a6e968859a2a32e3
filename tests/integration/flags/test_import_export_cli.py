"""`flagstaff import` and `flagstaff export` as HTTP clients of a real (threaded uvicorn) server:
round trip through files, and clear one-line errors with a non-zero exit for a bad token, a bad
file, an unknown environment and an unreachable server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from flag_api import ADMIN_TOKEN, PROJECT
from flagstaff_core import decode_data, encode_data
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.cli import main
from flagstaff_server.http.api.application import build_api
from support.in_process import control_plane
from support.ports import free_port
from support.threaded_servers import serve_in_thread

DATA = {
    "flags": {
        "banner": {
            "key": "banner",
            "version": 3,
            "on": True,
            "variations": ["red", "blue"],
            "fallthrough": {
                "rollout": {
                    "variations": [
                        {"variation": 0, "weight": 40000},
                        {"variation": 1, "weight": 60000},
                    ]
                }
            },
            "offVariation": 0,
            "rules": [
                {
                    "id": "r1",
                    "variation": 1,
                    "clauses": [
                        {"attribute": "plan", "op": "in", "values": ["gold"], "negate": False}
                    ],
                }
            ],
            "salt": "abc",
        }
    },
    "segments": {"vip": {"key": "vip", "version": 2, "included": ["u1"], "salt": "s"}},
}


@pytest.fixture
def server_url() -> Iterator[str]:
    plane = control_plane(InMemoryStore(), admin_token=ADMIN_TOKEN)
    with serve_in_thread(
        build_api(plane, version="test"), what="the management API", stop_timeout=10
    ) as server:
        response = httpx.post(
            f"{server.url}/api/v2/projects",
            json={"key": PROJECT, "name": "P"},
            headers={"Authorization": ADMIN_TOKEN},
        )
        assert response.status_code == 201, response.text
        yield server.url


def run(*argv: str) -> int:
    return main(list(argv))


def test_import_then_export_round_trips_through_files(
    server_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "data.json"
    source.write_text(json.dumps(DATA))
    target = tmp_path / "out.json"
    common = ("--project", PROJECT, "--environment", "test", "--url", server_url)
    assert run("import", *common, "--token", ADMIN_TOKEN, str(source)) == 0
    assert "imported 1 flag and 1 segment into" in capsys.readouterr().err
    assert run("export", *common, "--token", ADMIN_TOKEN, "-o", str(target)) == 0
    exported = json.loads(target.read_text())
    assert encode_data(decode_data(exported)) == encode_data(decode_data(DATA))


def test_export_reads_token_from_environment_and_writes_stdout(
    server_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FLAGSTAFF_TOKEN", ADMIN_TOKEN)
    assert (
        run("export", "--project", PROJECT, "--environment", "production", "--url", server_url) == 0
    )
    assert json.loads(capsys.readouterr().out) == {"flags": {}, "segments": {}}


def test_bad_token_bad_file_and_unknown_environment_fail_clearly(
    server_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "data.json"
    source.write_text(json.dumps(DATA))
    common = ("--project", PROJECT, "--url", server_url)

    assert run("import", *common, "--environment", "test", "--token", "wrong", str(source)) == 1
    assert "401" in capsys.readouterr().err

    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"flags": {"f": {"key": "f", "version": "x"}}}))
    assert run("import", *common, "--environment", "test", "--token", ADMIN_TOKEN, str(broken)) == 1
    message = capsys.readouterr().err
    assert "400" in message
    assert "flags" in message

    not_json = tmp_path / "not.json"
    not_json.write_text("{")
    assert (
        run("import", *common, "--environment", "test", "--token", ADMIN_TOKEN, str(not_json)) == 1
    )
    assert "not valid JSON" in capsys.readouterr().err

    assert run("export", *common, "--environment", "staging", "--token", ADMIN_TOKEN) == 1
    assert "404" in capsys.readouterr().err


def test_unreachable_server_and_missing_token_fail_clearly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("FLAGSTAFF_TOKEN", raising=False)
    common = ("--project", PROJECT, "--environment", "test")
    assert run("export", *common) == 1
    message = capsys.readouterr().err
    assert "FLAGSTAFF_TOKEN" in message
    assert "admin-token" in message
    assert len(message.strip().splitlines()) == 1
    url = f"http://127.0.0.1:{free_port()}"
    assert run("export", *common, "--url", url, "--token", "t") == 1
    assert "cannot reach" in capsys.readouterr().err
