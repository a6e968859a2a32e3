"""Finding the PostgreSQL server programs: a directory without the one asked for is an error
naming the program and the directory, never a bare FileNotFoundError later."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.regions.postgres_cluster import ClusterError, PostgresBinaries


def test_a_missing_program_is_named_with_the_directory_searched(tmp_path: Path) -> None:
    (tmp_path / "initdb").write_text("")
    binaries = PostgresBinaries(tmp_path)
    assert binaries.tool("initdb") == str(tmp_path / "initdb")
    with pytest.raises(ClusterError, match=f"pg_rewind not found in {tmp_path}"):
        binaries.tool("pg_rewind")
