"""The kit's processes: the environment a user's shell would give `flagstaff` leaves out the test
runner's FLAGSTAFF_ variables and keeps the rest."""

from __future__ import annotations

import pytest
from support.processes import user_environment


def test_a_user_environment_has_no_flagstaff_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGSTAFF_ADMIN_TOKEN", "from-the-runner")
    monkeypatch.setenv("TESTKIT_OTHER", "kept")
    environment = user_environment()
    assert "FLAGSTAFF_ADMIN_TOKEN" not in environment
    assert environment["TESTKIT_OTHER"] == "kept"
