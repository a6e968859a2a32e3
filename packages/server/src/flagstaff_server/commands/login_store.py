"""Where `flagstaff login` keeps the server URL and access token: `$XDG_CONFIG_HOME/flagstaff/
login.json` (`~/.config/...` without it), written with mode 0600 through a temporary file so a
reader never sees half of it. Owns the file only; choosing between sources is `credentials`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from flagstaff_server.commands.error import CommandError

FILE_NAME = "login.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class Login:
    url: str
    token: str


def login_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if Path(base).is_absolute() else Path.home() / ".config"
    return root / "flagstaff" / FILE_NAME


def read_login() -> Login | None:
    """The stored login, or None when there is none; a damaged file is an error naming it."""
    path = login_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read {path}: {exc}; run `flagstaff login` again") from exc
    if not isinstance(data, dict) or not all(
        isinstance(data.get(name), str) for name in ("url", "token")
    ):
        raise CommandError(f"{path} is not a Flagstaff login; run `flagstaff login` again")
    return Login(url=data["url"], token=data["token"])


def write_login(login: Login) -> Path:
    path = login_path()
    temporary = path.with_suffix(".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump({"url": login.url, "token": login.token}, handle)
        os.chmod(temporary, 0o600)  # O_CREAT's mode does not apply to a file left behind
        os.replace(temporary, path)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def remove_login() -> bool:
    try:
        login_path().unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise CommandError(f"cannot remove {login_path()}: {exc.strerror or exc}") from exc
    return True
