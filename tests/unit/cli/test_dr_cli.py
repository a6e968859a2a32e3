"""`flagstaff dr`: `new-epoch` starts the next epoch on an existing database (text or JSON);
`status` of an embedded (SQLite) database says so and `promote` refuses it in one line; every bad
input, and an unreachable database, is one line on stderr with a non-zero exit. (Real
promotions: tests/integration/regions.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.cli import main
from flagstaff_server.services.epochs import SEQ_GAP
from support.ports import free_port

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def run_dr(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["dr", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def database(tmp_path: Path) -> str:
    url = sqlite_url(tmp_path / "restored.db")
    store = SqlStore(url)
    with store.unit_of_work() as uow:
        for key in ("a", "b"):
            uow.changes.append(
                project="p", environment="e", kind="flag", key=key, version=1, item=None, at=T0
            )
    store.close()
    return url


def test_new_epoch_starts_the_next_epoch_after_the_last_seq(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    code, out, err = run_dr(capsys, "new-epoch", "--database", database)
    assert (code, err) == (0, "")
    assert out.startswith("epoch 2 started (restore) after seq 2: ")
    assert f"numbered from {2 + SEQ_GAP + 2}" in out
    code, out, _ = run_dr(capsys, "new-epoch", "--database", database, "--output", "json")
    assert code == 0
    body = json.loads(out)
    assert (body["epoch"], body["startedAfterSeq"], body["reason"]) == (3, 3 + SEQ_GAP, "restore")
    assert body["nextSeq"] == 3 + 2 * SEQ_GAP + 2
    store = SqlStore(database)
    with store.unit_of_work(read_only=True) as uow:
        assert [(e.epoch, e.reason) for e in uow.epochs.list()] == [
            (1, "initial"),
            (2, "restore"),
            (3, "restore"),
        ]
    store.close()


def test_new_epoch_records_the_reason_given(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    code, out, _ = run_dr(capsys, "new-epoch", "--database", database, "--reason", "pitr drill")
    assert code == 0
    assert "(pitr drill)" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--database", "sqlite:///{tmp}/missing.db"], 1, "no database at"),
        (["--database", "mysql://x/y"], 2, "unsupported database"),
        (["--database", "{db}", "--reason", " "], 2, "--reason must not be empty"),
    ],
)
def test_new_epoch_refuses_bad_input_in_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    database: str,
    args: list[str],
    code: int,
    message: str,
) -> None:
    filled = [a.format(tmp=tmp_path, db=database) for a in args]
    got, out, err = run_dr(capsys, "new-epoch", *filled)
    assert (got, out) == (code, "")
    assert err.count("\n") == 1
    assert message in err
    assert not (tmp_path / "missing.db").exists()


def test_status_of_sqlite_is_embedded_in_json_and_in_text(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    code, out, err = run_dr(capsys, "status", "--database", database, "--output", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "database": {
            "role": "embedded",
            "replicationLagSeconds": None,
            "timeline": None,
            "epoch": 1,
        },
        "primaryRegion": None,
    }
    code, out, err = run_dr(capsys, "status", "--database", database)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split() == ["role", "embedded"]


def test_status_shows_the_epoch_a_restore_started(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    assert run_dr(capsys, "new-epoch", "--database", database)[0] == 0
    code, out, _ = run_dr(capsys, "status", "--database", database, "--output", "json")
    assert code == 0
    assert json.loads(out)["database"]["epoch"] == 2


def test_promoting_sqlite_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    code, out, err = run_dr(capsys, "promote", "--database", database)
    assert (code, out) == (1, "")
    assert err == (
        "flagstaff dr: the database is embedded (SQLite): it has no standby to promote\n"
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["status", "--data-dir", "{tmp}/nowhere"], 1, "no database at"),
        (["status", "--database", "mysql://x/y"], 2, "unsupported database 'mysql'"),
        (["promote", "--database", "{db}", "--region", "EU"], 2, "FLAGSTAFF_REGION"),
        (["promote", "--database", "{db}", "--wait-seconds", "0"], 2, "--wait-seconds"),
    ],
)
def test_status_and_promote_refuse_bad_input_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    database: str,
    args: list[str],
    code: int,
    message: str,
) -> None:
    monkeypatch.delenv("FLAGSTAFF_DATABASE_URL", raising=False)
    monkeypatch.delenv("FLAGSTAFF_REGION", raising=False)
    filled = [a.format(tmp=tmp_path, db=database) for a in args]
    got, out, err = run_dr(capsys, *filled)
    assert (got, out) == (code, "")
    assert err.startswith("flagstaff dr: ")
    assert message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "nowhere").exists()


def test_an_unreachable_database_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    code, out, err = run_dr(capsys, "status", "--database", url)
    assert (code, out) == (1, "")
    assert err.startswith("flagstaff dr: database postgresql+psycopg://postgres@127.0.0.1:")
    assert "unavailable" in err
    assert err.count("\n") == 1
