"""pytest imports test modules by their base name (rootdir import mode, no packages), so two test
files of one name in different folders stop the whole run at collection. Caught here, where a
narrow run of the unit tests sees it too."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def test_every_test_module_has_its_own_base_name() -> None:
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
