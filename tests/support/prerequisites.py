"""Where the repository and ../shared live, and how a missing prerequisite is treated.

Outside CI a test whose data or service is missing is skipped; with CI=true it fails, so a missing
prerequisite can never pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = Path(os.environ.get("FLAGSTAFF_SHARED_DIR", REPO_ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() == "true"


def missing_prerequisite(reason: str) -> None:
    """Skip locally, fail in CI: a prerequisite that CI must always have is absent."""
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip/fail when it is not there."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        missing_prerequisite(f"{path} is missing")
    return path
