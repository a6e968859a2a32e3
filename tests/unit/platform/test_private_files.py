"""Files the server writes into its data directory are readable by their owner only: delivery
snapshots hold SDK keys, the ingestion journal and the relay spool hold the contexts SDKs sent."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from flagstaff_server.durable import replace_file
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.record import Kind


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """The usual umask (022), which would leave a plainly created file readable by everyone."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_replaced_file_is_private_whether_new_or_replacing_an_old_one(tmp_path: Path) -> None:
    target = tmp_path / "environment.json"
    replace_file(target, b"{}")
    assert mode_of(target) == 0o600
    target.chmod(0o644)
    replace_file(target, b"{}")
    assert mode_of(target) == 0o600


async def append_one(journal: Journal) -> None:
    await journal.submit(
        kind=Kind.ANALYTICS,
        project="shop",
        environment="production",
        payload_id="p-1",
        payload=b'[{"kind":"identify","context":{"key":"ana"}}]',
        received_ms=1_000,
    )


def test_journal_segments_are_private(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    asyncio.run(append_one(journal))
    journal.close()
    segments = sorted(tmp_path.glob("*.log"))
    assert segments
    assert [mode_of(segment) for segment in segments] == [0o600] * len(segments)
