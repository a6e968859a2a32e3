"""`flagstaff dr new-epoch`: starts the next epoch on an existing database (text or JSON), and
every bad input is one line on stderr with a non-zero exit."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.cli import main
from flagstaff_server.services.epochs import SEQ_GAP

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
