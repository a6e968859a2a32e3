"""The disk cache: the last good data with its FDv2 selector and when it was saved, written
atomically (temp file, fsync, rename) so a crash leaves the old copy or the new one, never half.

Blocking file I/O: the actor calls it in a worker thread. Must not decide when to write.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flagstaff_core import DecodeError, decode_data, encode_data

from flagstaff_sdk.change_set import Selector
from flagstaff_sdk.errors import DataFileError
from flagstaff_sdk.merge import Holding

FORMAT = "flagstaff-sdk-cache/1"


@dataclass(frozen=True, slots=True)
class CachedData:
    holding: Holding
    saved_at: float
    """Wall-clock time (epoch seconds) the data was written."""


def cache_path(cache_dir: Path, sdk_key: str) -> Path:
    """One file per SDK key; the key itself is not written anywhere (it is a secret)."""
    digest = hashlib.sha256(sdk_key.encode()).hexdigest()[:20]
    return cache_dir / f"flagstaff-{digest}.json"


def write_cache(path: Path, holding: Holding, saved_at: float) -> None:
    selector = holding.selector
    document: dict[str, Any] = {
        "format": FORMAT,
        "savedAt": saved_at,
        "selector": None
        if selector is None
        else {"state": selector.state, "version": selector.version},
        "data": encode_data(holding.data),
    }
    body = json.dumps(document, separators=(",", ":")).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(body)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    # the rename is durable only once the directory entry is on disk
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_cache(path: Path) -> CachedData | None:
    """The cached data, or None when there is no cache file; DataFileError when unusable."""
    try:
        body = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DataFileError(str(path), f"cannot read: {exc}") from exc
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise DataFileError(str(path), f"not JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DataFileError(str(path), f"not a {FORMAT} file")
    saved_at = document.get("savedAt")
    if not isinstance(saved_at, int | float):
        raise DataFileError(str(path), "savedAt must be a number")
    raw_selector = document.get("selector")
    selector = None
    if isinstance(raw_selector, dict):
        state, version = raw_selector.get("state"), raw_selector.get("version")
        if isinstance(state, str) and type(version) is int:
            selector = Selector(state, version)
    try:
        data = decode_data(document.get("data"))
    except DecodeError as exc:
        raise DataFileError(str(path), str(exc)) from exc
    learned = float("-inf")
    learned_at = {("flag", key): learned for key in data.flags}
    learned_at.update({("segment", key): learned for key in data.segments})
    return CachedData(Holding(data=data, selector=selector, learned_at=learned_at), saved_at)
