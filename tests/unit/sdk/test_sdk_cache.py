"""The disk cache: round trip with selector and timestamp, atomic replacement, unusable files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from delivery_support import flag, segment
from flagstaff_core import decode_data
from flagstaff_sdk.cache import cache_path, read_cache, write_cache
from flagstaff_sdk.change_set import Selector
from flagstaff_sdk.errors import DataFileError
from flagstaff_sdk.merge import Holding


def holding(version: int) -> Holding:
    data = decode_data({"flags": {"a": flag("a", version)}, "segments": {"s": segment("s")}})
    return Holding(data=data, selector=Selector(f"state-{version}", version))


def test_cache_round_trips_data_selector_and_time(tmp_path: Path) -> None:
    path = cache_path(tmp_path, "sdk-secret")
    assert "sdk-secret" not in path.name
    assert read_cache(path) is None
    write_cache(path, holding(3), 1234.5)
    cached = read_cache(path)
    assert cached is not None
    assert cached.saved_at == 1234.5
    assert cached.holding.data == holding(3).data
    assert cached.holding.selector == Selector("state-3", 3)
    assert b"sdk-secret" not in path.read_bytes()


def test_a_failed_write_leaves_the_previous_cache_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cache_path(tmp_path, "k")
    write_cache(path, holding(1), 1.0)

    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_cache(path, holding(2), 2.0)
    monkeypatch.undo()
    cached = read_cache(path)
    assert cached is not None
    assert cached.holding.data.flags["a"].version == 1
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.parametrize(
    "content",
    [b"{half", b'{"format": "other"}', b'{"format": "flagstaff-sdk-cache/1", "savedAt": 1}'],
    ids=["truncated", "foreign", "no-data"],
)
def test_an_unusable_cache_file_is_a_data_file_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(content)
    with pytest.raises(DataFileError):
        read_cache(path)
