"""The node's copy of its snapshots on local disk: one file per environment (data, tombstones,
credentials, seq) and one for the feed position, each replaced atomically (temp, fsync, rename).

Blocking file I/O: callers run `write` in a worker thread. Encoding happens on the loop (cheap:
the data-set body is already bytes); reading happens once at start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import orjson

from flagstaff_server.delivery.credential import (
    Credentials,
    decode_credentials,
    encode_credentials,
)
from flagstaff_server.delivery.snapshot import Snapshot, build_snapshot
from flagstaff_server.durable import fsync_directory, replace_file

log = logging.getLogger(__name__)

FORMAT = 1
POSITION_FILE = "position.json"
ENVIRONMENTS_DIR = "environments"


@dataclass(frozen=True, slots=True)
class Loaded:
    position: int
    """The feed position to resume from (0 when any file was unreadable: replay everything)."""
    environments: list[tuple[Snapshot, Credentials | None]]


def file_name(project: str, environment: str) -> str:
    return f"{quote(project, safe='')}~{quote(environment, safe='')}.json"


def encode_environment(snapshot: Snapshot, credentials: Credentials | None) -> bytes:
    meta = {
        "format": FORMAT,
        "project": snapshot.project,
        "environment": snapshot.environment,
        "seq": snapshot.seq,
        "credentials": None if credentials is None else encode_credentials(credentials),
        "tombstones": [
            [kind, key, version] for (kind, key), version in snapshot.tombstones.items()
        ],
    }
    return b'{"meta":' + orjson.dumps(meta) + b',"data":' + snapshot.body + b"}"


def decode_environment(raw: bytes) -> tuple[Snapshot, Credentials | None]:
    """Raises ValueError for a file that is not a snapshot this code wrote."""
    doc = orjson.loads(raw)
    meta, data = doc["meta"], doc["data"]
    if meta.get("format") != FORMAT:
        raise ValueError(f"unknown snapshot format {meta.get('format')!r}")
    project, environment = meta["project"], meta["environment"]
    tombstones = {(kind, key): int(version) for kind, key, version in meta["tombstones"]}
    snapshot = build_snapshot(
        project,
        environment,
        seq=int(meta["seq"]),
        flags=data["flags"],
        segments=data["segments"],
        tombstones=tombstones,
    )
    raw_credentials = meta.get("credentials")
    credentials = (
        None
        if raw_credentials is None
        else decode_credentials(project, environment, raw_credentials)
    )
    return snapshot, credentials


def write(directory: Path, files: dict[str, bytes | None], position: int | None) -> None:
    """Replace (bytes) or remove (None) environment files, then record `position`; the position
    is written last so it never runs ahead of the data it summarises."""
    env_dir = directory / ENVIRONMENTS_DIR
    env_dir.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = env_dir / name
        if content is None:
            path.unlink(missing_ok=True)
        else:
            replace_file(path, content)
    if files:
        fsync_directory(env_dir)
    if position is not None:
        replace_file(
            directory / POSITION_FILE, orjson.dumps({"format": FORMAT, "position": position})
        )
        fsync_directory(directory)


def load(directory: Path) -> Loaded:
    position = 0
    complete = True
    try:
        position = int(orjson.loads((directory / POSITION_FILE).read_bytes())["position"])
    except FileNotFoundError:
        complete = False
    except (ValueError, KeyError, TypeError, OSError) as exc:
        log.error("unreadable feed position in %s, replaying the feed: %s", directory, exc)
        complete = False
    environments: list[tuple[Snapshot, Credentials | None]] = []
    env_dir = directory / ENVIRONMENTS_DIR
    paths = sorted(env_dir.glob("*.json")) if env_dir.is_dir() else []
    for path in paths:
        try:
            environments.append(decode_environment(path.read_bytes()))
        except (ValueError, KeyError, TypeError, OSError) as exc:
            log.error("unreadable snapshot %s, replaying the feed: %s", path, exc)
            complete = False
    return Loaded(position=position if complete else 0, environments=environments)


def environment_of(name: str) -> tuple[str, str]:
    project, _, environment = name.removesuffix(".json").partition("~")
    return unquote(project), unquote(environment)
