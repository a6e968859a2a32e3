"""The flag-work commands (`flagstaff login|flags|segments|projects|environments|audit|
completion`) as HTTP clients of a real management API under uvicorn: each command's table and JSON
output, the stored login, exit codes, and one-line messages for bad input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.cli import main
from flagstaff_server.http.api.application import build_api
from support.in_process import control_plane
from support.ports import free_port
from support.processes import flagstaff_command, user_environment
from support.threaded_servers import serve_in_thread

TOKEN = "cli-admin-token"


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("FLAGSTAFF_TOKEN", raising=False)
    monkeypatch.delenv("FLAGSTAFF_URL", raising=False)
    plane = control_plane(InMemoryStore(), admin_token=TOKEN)
    with serve_in_thread(build_api(plane, version="test"), what="the API", stop_timeout=10) as api:
        yield api.url


class Cli:
    def __init__(self, url: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.url = url
        self.capsys = capsys

    def run(self, *argv: str, auth: bool = True) -> tuple[int, str, str]:
        self.capsys.readouterr()
        extra = ("--url", self.url, "--token", TOKEN) if auth else ()
        try:
            code = main([*argv, *extra])
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *argv: str) -> Any:
        code, out, err = self.run(*argv, "-o", "json")
        assert code == 0, err
        return json.loads(out)

    def fails(self, expected: int, *argv: str, auth: bool = True) -> str:
        code, _, err = self.run(*argv, auth=auth)
        assert code == expected, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        return lines[0]


@pytest.fixture
def cli(url: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    cli = Cli(url, capsys)
    assert cli.run("projects", "create", "shop", "--name", "Shop")[0] == 0
    return cli


def test_projects_and_environments_list_get_create(cli: Cli) -> None:
    code, out, _ = cli.run("projects", "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["KEY", "NAME", "ENVIRONMENTS", "TAGS"]
    assert "shop" in out
    assert "production,test" in out
    assert cli.json("projects", "get", "shop")["name"] == "Shop"
    created = cli.json("environments", "create", "-p", "shop", "staging", "--name", "Staging")
    assert created["key"] == "staging"
    listed = cli.json("environments", "list", "-p", "shop")
    assert sorted(e["key"] for e in listed["items"]) == ["production", "staging", "test"]
    assert cli.json("environments", "get", "-p", "shop", "staging")["name"] == "Staging"
    assert "404" in cli.fails(1, "projects", "get", "nope")
    message = cli.fails(1, "environments", "create", "-p", "shop", "staging")
    assert message.startswith("flagstaff environments: server answered 409")


def test_flag_lifecycle_create_switch_archive_delete(cli: Cli) -> None:
    created = cli.json(
        "flags",
        "create",
        "-p",
        "shop",
        "banner",
        "--variation",
        '"red"',
        "--variation",
        '"blue"',
        "--tag",
        "web",
    )
    assert [v["value"] for v in created["variations"]] == ["red", "blue"]
    flag = cli.json("flags", "on", "-p", "shop", "banner", "-e", "production", "--comment", "go")
    assert flag["environments"]["production"]["on"] is True
    assert flag["environments"]["test"]["on"] is False
    code, out, _ = cli.run("flags", "list", "-p", "shop")
    assert code == 0
    header, row = out.splitlines()[0].split(), out.splitlines()[1].split()
    assert header == ["KEY", "NAME", "KIND", "PRODUCTION", "TEST", "TAGS"]
    assert row == ["banner", "banner", "multivariate", "on", "off", "web"]
    off = cli.json("flags", "off", "-p", "shop", "banner", "-e", "production")
    assert off["environments"]["production"]["on"] is False
    code, out, _ = cli.run("flags", "get", "-p", "shop", "banner", "-e", "production")
    assert code == 0
    assert "production" in out
    assert "test" not in out
    audit = cli.json("audit", "--spec", "proj/shop:env/production:flag/banner")
    assert any(entry["comment"] == "go" for entry in audit["items"])
    code, out, _ = cli.run("audit")
    assert code == 0
    assert out.splitlines()[0].split()[:2] == ["DATE", "KIND"]
    assert cli.json("flags", "archive", "-p", "shop", "banner")["archived"] is True
    assert cli.json("flags", "list", "-p", "shop")["items"] == []
    assert [f["key"] for f in cli.json("flags", "list", "-p", "shop", "--archived")["items"]] == [
        "banner"
    ]
    assert cli.run("flags", "delete", "-p", "shop", "banner")[0] == 0
    message = cli.fails(1, "flags", "get", "-p", "shop", "banner")
    assert message.startswith("flagstaff flags: server answered 404")


def test_segments_list_get_create_delete(cli: Cli) -> None:
    made = cli.json("segments", "create", "-p", "shop", "-e", "production", "vip", "--tag", "t")
    assert made["tags"] == ["t"]
    code, out, _ = cli.run("segments", "list", "-p", "shop", "-e", "production")
    assert code == 0
    assert out.splitlines()[1].split() == ["vip", "vip", "0", "0", "t"]
    assert cli.json("segments", "get", "-p", "shop", "-e", "production", "vip")["key"] == "vip"
    assert cli.run("segments", "delete", "-p", "shop", "-e", "production", "vip")[0] == 0
    assert cli.json("segments", "list", "-p", "shop", "-e", "production")["items"] == []
    message = cli.fails(1, "segments", "delete", "-p", "shop", "-e", "production", "vip")
    assert "404" in message


def test_bad_input_is_one_line_and_a_nonzero_exit(cli: Cli) -> None:
    bad_key = cli.fails(1, "flags", "create", "-p", "shop", "no spaces allowed")
    assert "key" in bad_key
    assert "--variation must be JSON" in cli.fails(
        2, "flags", "create", "-p", "shop", "x", "--variation", "red"
    )
    assert cli.run("flags", "on", "-p", "shop", "missing")[0] == 2  # no --environment
    assert cli.run("flags", "frobnicate")[0] == 2
    assert "token" in cli.fails(
        1, "flags", "list", "-p", "shop", "--url", cli.url, "--token", "wrong", auth=False
    )
    closed = f"http://127.0.0.1:{free_port()}"
    unreachable = cli.fails(
        3, "flags", "list", "-p", "shop", "--url", closed, "--token", "t", auth=False
    )
    assert "cannot reach" in unreachable
    assert "not signed in" in cli.fails(
        4, "flags", "list", "-p", "shop", "--url", cli.url, auth=False
    )


def test_login_stores_the_token_with_mode_0600_and_is_used(cli: Cli, tmp_path: Path) -> None:
    assert cli.fails(1, "login", "--url", cli.url, "--token", "wrong", auth=False)
    assert not (tmp_path / "config" / "flagstaff" / "login.json").exists()
    code, out, err = cli.run("login", "--url", cli.url, "--token", TOKEN, auth=False)
    assert code == 0, err
    stored = tmp_path / "config" / "flagstaff" / "login.json"
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600
    assert json.loads(stored.read_text()) == {"url": cli.url, "token": TOKEN}
    code, out, _ = cli.run("projects", "list", "-o", "json", auth=False)
    assert code == 0
    assert [p["key"] for p in json.loads(out)["items"]] == ["shop"]
    assert cli.run("logout", auth=False)[0] == 0
    assert cli.run("projects", "list", auth=False)[0] == 4


def test_table_fits_the_terminal_width(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    long_name = "a flag whose name is far longer than any narrow terminal could show " * 2
    assert cli.run("flags", "create", "-p", "shop", "wide", "--name", long_name)[0] == 0
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = cli.run("flags", "list", "-p", "shop")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 60
    assert "…" in out


def test_completion_prints_shell_code_and_completes_commands(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli.run("completion", "bash", auth=False)
    assert code == 0
    assert "flagstaff" in out
    assert "complete" in out
    # what the shell code does on <TAB>: run the script with argcomplete's variables set
    answer = tmp_path / "completions"
    line = "flagstaff segments d"
    environment = {
        **user_environment(),
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    subprocess.run(flagstaff_command(), env=environment, timeout=60, check=True)
    assert answer.read_text().split() == ["delete"]


def test_migrate_refuses_bad_sources_in_one_line(cli: Cli) -> None:
    common = ("migrate", "launchdarkly", "--source-token", TOKEN)
    assert "--source-url" in cli.fails(2, *common, "--source-url", "ftp://nowhere")
    closed = f"http://127.0.0.1:{free_port()}"
    assert "cannot reach" in cli.fails(3, *common, "--source-url", closed)
    missing = cli.fails(1, *common, "--source-url", cli.url, "--project", "nope")
    assert "no such project" in missing
    wrong = cli.fails(1, "migrate", "launchdarkly", "--source-url", cli.url, "--source-token", "x")
    assert "rejected the access token" in wrong


def test_migrating_a_server_into_itself_changes_nothing(cli: Cli) -> None:
    assert cli.run("flags", "create", "-p", "shop", "banner")[0] == 0
    assert cli.run("segments", "create", "-p", "shop", "-e", "test", "vip")[0] == 0
    report = cli.json("migrate", "launchdarkly", "--source-url", cli.url, "--source-token", TOKEN)
    assert report["changes"] == 0, report["log"]
    assert report["unchanged"] == 3  # banner in two environments, vip in one
