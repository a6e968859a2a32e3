"""Flags from LaunchDarkly data files (`flags`, `segments`, `flagValues`), optionally re-read
when a file changes. Any problem in any file loads nothing (the previous data stays).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flagstaff_core import DecodeError, decode_data

from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.errors import DataFileError
from flagstaff_sdk.source import DataSink


def _value_flag(key: str, value: Any) -> dict[str, Any]:
    """`flagValues` entries are flags that serve one value to everyone."""
    return {
        "key": key,
        "version": 1,
        "on": True,
        "variations": [value],
        "fallthrough": {"variation": 0},
        "offVariation": 0,
    }


def read_data_files(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """`{"flags": {...}, "segments": {...}}` merged from every file; DataFileError on any problem
    (unreadable, not a JSON object, a key defined twice)."""
    flags: dict[str, Any] = {}
    segments: dict[str, Any] = {}
    for path in paths:
        try:
            document = json.loads(Path(path).read_bytes())
        except OSError as exc:
            raise DataFileError(str(path), f"cannot read: {exc}") from exc
        except ValueError as exc:
            raise DataFileError(str(path), f"not JSON: {exc}") from exc
        if not isinstance(document, dict):
            raise DataFileError(str(path), "must be a JSON object")
        sections = (
            ("flags", flags, lambda k, v: v),
            ("flagValues", flags, _value_flag),
            ("segments", segments, lambda k, v: v),
        )
        for section, target, convert in sections:
            items = document.get(section, {})
            if not isinstance(items, dict):
                raise DataFileError(str(path), f"'{section}' must be an object")
            for key, item in items.items():
                if key in target:
                    raise DataFileError(str(path), f"{section} key {key!r} is defined twice")
                converted = convert(key, item)
                if isinstance(converted, dict):
                    converted = {"version": 1, "key": key, **converted}
                target[key] = converted
    return {"flags": flags, "segments": segments}


class FileSource:
    """A DataSource over data files. Content that changes on reload gets a higher version, so
    listeners and the merge rule see it even when the file does not bump `version`."""

    def __init__(
        self, paths: Sequence[Path], *, auto_reload: bool = False, interval: float = 1.0
    ) -> None:
        self.paths = tuple(Path(p) for p in paths)
        self.auto_reload = auto_reload
        self.interval = interval
        self._seen: dict[tuple[str, str], tuple[str, int]] = {}

    @property
    def name(self) -> str:
        return "file"

    def load(self) -> ChangeSet:
        """Read every file now; DataFileError when any of them is unusable."""
        raw = read_data_files(self.paths)
        seen: dict[tuple[str, str], tuple[str, int]] = {}
        for section, kind in (("flags", "flag"), ("segments", "segment")):
            for key, item in raw[section].items():
                if not isinstance(item, dict):
                    continue  # the decoder names the problem below
                # a digest, not the text: reloads compare content without keeping a copy of it
                text = hashlib.blake2b(json.dumps(item, sort_keys=True).encode()).hexdigest()
                declared = item.get("version")
                version = declared if type(declared) is int else 1
                previous = self._seen.get((kind, key))
                if previous is not None and previous[0] != text:
                    version = max(version, previous[1] + 1)
                elif previous is not None:
                    version = previous[1]
                item["version"] = version
                seen[(kind, key)] = (text, version)
        try:
            data = decode_data(raw)
        except DecodeError as exc:
            raise DataFileError(", ".join(str(p) for p in self.paths), str(exc)) from exc
        self._seen = seen
        return ChangeSet(full=True, flags=data.flags, segments=data.segments, authoritative=True)

    def _stamp(self) -> tuple[tuple[int, int, int] | None, ...]:
        stamps: list[tuple[int, int, int] | None] = []
        for path in self.paths:
            try:
                stat = path.stat()
            except OSError:
                stamps.append(None)
            else:
                stamps.append((stat.st_mtime_ns, stat.st_size, stat.st_ino))
        return tuple(stamps)

    async def run(self, sink: DataSink) -> None:
        stamp = self._stamp()
        self._deliver(sink)
        if not self.auto_reload:
            await asyncio.Event().wait()
        while True:
            await asyncio.sleep(self.interval)
            current = self._stamp()
            if current != stamp:
                stamp = current
                self._deliver(sink)

    def _deliver(self, sink: DataSink) -> None:
        try:
            change = self.load()
        except DataFileError as exc:
            sink.report_error("file", str(exc))
            return
        sink.apply(change)
        sink.report_valid()
