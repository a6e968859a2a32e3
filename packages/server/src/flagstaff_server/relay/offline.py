"""Offline mode's data: a LaunchDarkly data file (`{"flags": {...}, "segments": {...}}`, what
`flagstaff export` writes) read, validated with the evaluation core, and watched for a
replacement by its modification time and size.

Blocking file I/O: the relay calls `read_data_file` in a worker thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from flagstaff_core import DecodeError, decode_data

JsonObject = dict[str, Any]


class DataFileError(ValueError):
    """The file cannot be served; the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class DataFile:
    flags: dict[str, JsonObject]
    segments: dict[str, JsonObject]
    stamp: tuple[float, int]
    """(modification time, size) when read: a different stamp means the file was replaced."""


def file_stamp(path: Path) -> tuple[float, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime, info.st_size


def read_data_file(path: Path) -> DataFile:
    stamp = file_stamp(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DataFileError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise DataFileError(f"{path}: must be a JSON object with flags and segments")
    flags = document.get("flags", {})
    segments = document.get("segments", {})
    if not isinstance(flags, dict) or not isinstance(segments, dict):
        raise DataFileError(f"{path}: flags and segments must be JSON objects")
    try:
        decode_data({"flags": flags, "segments": segments})
    except DecodeError as exc:
        raise DataFileError(f"{path}: {exc.path}: {exc.message}") from exc
    return DataFile(flags=flags, segments=segments, stamp=stamp or (0.0, len(raw)))
