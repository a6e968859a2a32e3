"""The node's copy of its snapshots on local disk: one file per environment (data, tombstones,
credentials, epoch and seq), one per environment for its FDv2 change log (`change_log_file`) and
one for the feed position (epoch, seq, and where that epoch began), each replaced atomically
(temp, fsync, rename). Files written before epochs read as epoch 1.

Blocking file I/O: callers run `write` in a worker thread, which also encodes (the snapshots are
immutable, and their bodies and log entries already bytes); reading happens once at start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import orjson

from flagstaff_server.delivery import change_log_file
from flagstaff_server.delivery.credential import (
    Credentials,
    decode_credentials,
    encode_credentials,
)
from flagstaff_server.delivery.position import FeedPosition
from flagstaff_server.delivery.snapshot import Snapshot, build_snapshot, with_kept_log
from flagstaff_server.durable import fsync_directory, replace_file

log = logging.getLogger(__name__)

FORMAT = 1
POSITION_FILE = "position.json"
ENVIRONMENTS_DIR = "environments"
LOGS_DIR = "logs"

Held = tuple[Snapshot, Credentials | None]
"""What is written for one environment: its snapshot (with its change log) and credentials."""


@dataclass(frozen=True, slots=True)
class Loaded:
    position: FeedPosition
    """The feed position to resume from (seq 0 when any file was unreadable: replay
    everything)."""
    environments: list[Held]
    logs_kept: int = 0
    """Environments whose change log was read back and leads to their snapshot."""


def file_name(project: str, environment: str) -> str:
    return f"{quote(project, safe='')}~{quote(environment, safe='')}.json"


def log_name(name: str) -> str:
    """The change log file beside environment file `name`."""
    return name.removesuffix(".json") + ".log"


def encode_environment(snapshot: Snapshot, credentials: Credentials | None) -> bytes:
    meta = {
        "format": FORMAT,
        "project": snapshot.project,
        "environment": snapshot.environment,
        "seq": snapshot.seq,
        "epoch": snapshot.epoch,
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
        epoch=int(meta.get("epoch", 1)),
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


def write(directory: Path, files: dict[str, Held | None], position: FeedPosition | None) -> None:
    """Replace (a snapshot) or remove (None) environment files and their change logs, then record
    `position`; the position is written last so it never runs ahead of the data it summarises.
    A log is written before its snapshot, so a crash between the two leaves a log that runs
    ahead (its tail is dropped at load), not one that stops short; either way `load` only keeps
    a log that leads exactly to the snapshot beside it."""
    env_dir = directory / ENVIRONMENTS_DIR
    logs_dir = directory / LOGS_DIR
    env_dir.mkdir(parents=True, exist_ok=True)
    logs_dir.mkdir(exist_ok=True)
    for name, held in files.items():
        path, log_path = env_dir / name, logs_dir / log_name(name)
        if held is None:
            path.unlink(missing_ok=True)
            log_path.unlink(missing_ok=True)
        else:
            snapshot, credentials = held
            replace_file(log_path, change_log_file.encode_log(snapshot))
            replace_file(path, encode_environment(snapshot, credentials))
    if files:
        fsync_directory(logs_dir)
        fsync_directory(env_dir)
    if position is not None:
        replace_file(directory / POSITION_FILE, encode_position(position))
        fsync_directory(directory)


def encode_position(position: FeedPosition) -> bytes:
    return orjson.dumps(
        {
            "format": FORMAT,
            "position": position.seq,
            "epoch": position.epoch,
            "epochStartedAfter": position.epoch_started_after,
            "epochAt": position.epoch_at_ms,
        }
    )


def decode_position(raw: bytes) -> FeedPosition:
    """Raises ValueError (or KeyError, TypeError) for anything this code did not write."""
    doc = orjson.loads(raw)
    values = {
        name: doc.get(field, default)
        for name, field, default in (
            ("seq", "position", None),
            ("epoch", "epoch", 1),
            ("epoch_started_after", "epochStartedAfter", 0),
            ("epoch_at_ms", "epochAt", 0),
        )
    }
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} is not a count: {value!r}")
    if values["epoch"] < 1:
        raise ValueError("epoch must be at least 1")
    return FeedPosition(**values)


def load(directory: Path, *, log_limit: int) -> Loaded:
    """Everything written before a restart; change logs longer than `log_limit` lose their
    oldest entries."""
    position = FeedPosition()
    complete = True
    try:
        position = decode_position((directory / POSITION_FILE).read_bytes())
    except FileNotFoundError:
        complete = False
    except (ValueError, KeyError, TypeError, OSError) as exc:
        log.error("unreadable feed position in %s, replaying the feed: %s", directory, exc)
        complete = False
    environments: list[Held] = []
    logs_kept = 0
    env_dir = directory / ENVIRONMENTS_DIR
    paths = sorted(env_dir.glob("*.json")) if env_dir.is_dir() else []
    for path in paths:
        try:
            snapshot, credentials = decode_environment(path.read_bytes())
        except (ValueError, KeyError, TypeError, OSError) as exc:
            log.error("unreadable snapshot %s, replaying the feed: %s", path, exc)
            complete = False
            continue
        kept = _with_log(directory / LOGS_DIR / log_name(path.name), snapshot, log_limit)
        logs_kept += kept is not snapshot
        environments.append((kept, credentials))
    return Loaded(
        position=position if complete else FeedPosition(),
        environments=environments,
        logs_kept=logs_kept,
    )


def _with_log(path: Path, snapshot: Snapshot, log_limit: int) -> Snapshot:
    """`snapshot` with its kept change log, or unchanged (an empty log: clients behind it get a
    full transfer) when there is none that is intact and leads to it."""
    try:
        kept = change_log_file.decode_log(path.read_bytes())
    except FileNotFoundError:
        return snapshot
    except (ValueError, OSError) as exc:
        log.warning(
            "ignoring the change log %s (clients behind get a full transfer): %s", path, exc
        )
        return snapshot
    restored = None
    if (kept.project, kept.environment) == (snapshot.project, snapshot.environment):
        restored = with_kept_log(snapshot, kept.floor, kept.entries, log_limit)
    if restored is None:
        log.warning(
            "ignoring the change log %s: it does not lead to the snapshot at %d/%d",
            path,
            snapshot.epoch,
            snapshot.seq,
        )
        return snapshot
    return restored


def stored_environments(directory: Path) -> list[tuple[str, str]]:
    """(project, environment) of every snapshot file in `directory`."""
    env_dir = directory / ENVIRONMENTS_DIR
    if not env_dir.is_dir():
        return []
    return [environment_of(path.name) for path in sorted(env_dir.glob("*.json"))]


def environment_of(name: str) -> tuple[str, str]:
    project, _, environment = name.removesuffix(".json").partition("~")
    return unquote(project), unquote(environment)
