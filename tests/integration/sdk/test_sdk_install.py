"""The SDK installed the way docs/sdk.md says, into a fresh virtualenv with nothing else: from the
repository's source directories, and from wheels built with `uv build`. The installed SDK then
evaluates a data file, answers through its OpenFeature provider (the `openfeature` extra) and
gives `all_flags_state()`, without the server package.

pip uses the machine's package index settings (its mirrors) for httpx, openfeature-sdk and the
build backend; the Flagstaff packages come only from the repository or the wheels built here.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.prerequisites import REPO_ROOT

pytestmark = [pytest.mark.slow]

SDK_DOC = REPO_ROOT / "docs" / "sdk.md"
SOURCE_INSTALL = "pip install ./packages/core './packages/sdk[openfeature]'"
WHEEL_BUILDS = (
    "uv build --package flagstaff-core --wheel --out-dir dist",
    "uv build --package flagstaff-sdk --wheel --out-dir dist",
)
WHEEL_INSTALL = "pip install --find-links dist 'flagstaff-sdk[openfeature]'"
COMMAND_TIMEOUT = 300.0
"""A pip install that fetches httpx, openfeature-sdk and hatchling on a loaded machine."""

DATA = {
    "flags": {
        "banner": {
            "key": "banner",
            "version": 3,
            "on": True,
            "fallthrough": {"variation": 0},
            "variations": ["green", "grey"],
        }
    },
    "segments": {},
}

SMOKE = """
import importlib.util, json, sys
from pathlib import Path

import flagstaff_sdk
from flagstaff_sdk import Client, Config, Context
from flagstaff_sdk.openfeature import FlagstaffProvider
from openfeature import api
from openfeature.evaluation_context import EvaluationContext

config = Config(sdk_key="sdk-install", data_files=(Path(sys.argv[1]),), send_events=False)
client = Client(config)
api.set_provider_and_wait(FlagstaffProvider(client))
user = Context.create("user-1")
state = client.all_flags_state(user)
print(json.dumps({
    "variation": client.variation("banner", user, "default"),
    "openfeature": api.get_client().get_string_value(
        "banner", "default", EvaluationContext(targeting_key="user-1")
    ),
    "valid": state.valid,
    "values": state.to_values_map(),
    "sdk": flagstaff_sdk.__file__,
    "server": importlib.util.find_spec("flagstaff_server") is not None,
}))
api.shutdown()
"""


def _environment() -> dict[str, str]:
    """This process's environment without what would point Python at the workspace's venv."""
    drop = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"}
    return {key: value for key, value in os.environ.items() if key not in drop}


def _run(argv: list[str], *, cwd: Path) -> str:
    result = subprocess.run(
        argv,
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, f"{shlex.join(argv)}: {result.stdout[-2000:]}{result.stderr}"
    return result.stdout


def _fresh_venv(path: Path) -> Path:
    """A new virtualenv (with pip, nothing else) at `path`; returns its bin directory."""
    _run([sys.executable, "-m", "venv", str(path)], cwd=path.parent)
    return path / "bin"


def _uv() -> str:
    """The uv that `make install` put in .tools, else one on PATH."""
    local = REPO_ROOT / ".tools" / "bin" / "uv"
    found = str(local) if local.exists() else shutil.which("uv")
    assert found, "no uv: run `make install` first"
    return found


def _documented(command: str, **replacements: str) -> list[str]:
    """`command` as docs/sdk.md has it (checked), split, with programs and paths replaced."""
    assert command in SDK_DOC.read_text(encoding="utf-8"), f"docs/sdk.md lost {command!r}"
    argv = shlex.split(command)
    return [replacements.get(word, word) for word in argv]


def _smoke(bin_dir: Path, tmp_path: Path) -> dict[str, Any]:
    data = tmp_path / "flags.json"
    data.write_text(json.dumps(DATA), encoding="utf-8")
    script = tmp_path / "smoke.py"
    script.write_text(SMOKE, encoding="utf-8")
    out = _run([str(bin_dir / "python"), str(script), str(data)], cwd=tmp_path)
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _check(result: dict[str, Any], venv: Path) -> None:
    assert result["variation"] == "green"
    assert result["openfeature"] == "green"
    assert result["valid"] is True
    assert result["values"] == {"banner": "green"}
    assert Path(result["sdk"]).is_relative_to(venv), "the SDK was not the installed one"
    assert result["server"] is False


def test_the_documented_install_from_the_repository_works_in_a_fresh_virtualenv(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "venv"
    bin_dir = _fresh_venv(venv)
    _run(_documented(SOURCE_INSTALL, pip=str(bin_dir / "pip")), cwd=REPO_ROOT)
    _check(_smoke(bin_dir, tmp_path), venv)


def test_wheels_built_with_uv_install_with_the_extra_in_a_fresh_virtualenv(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    for build in WHEEL_BUILDS:
        _run(_documented(build, uv=_uv(), dist=str(dist)), cwd=REPO_ROOT)
    assert sorted(wheel.name.split("-")[0] for wheel in dist.glob("*.whl")) == [
        "flagstaff_core",
        "flagstaff_sdk",
    ]
    venv = tmp_path / "venv"
    bin_dir = _fresh_venv(venv)
    _run(_documented(WHEEL_INSTALL, pip=str(bin_dir / "pip"), dist=str(dist)), cwd=tmp_path)
    _check(_smoke(bin_dir, tmp_path), venv)
