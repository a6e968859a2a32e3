"""The chain's initializers, run synchronously before the actor's loop starts: data files when
configured, else the disk cache, else the bootstrap file. A problem with any of them is logged or
recorded and the client starts without that data; nothing here touches the network.
"""

from __future__ import annotations

import logging
from pathlib import Path

from flagstaff_core import FlagData

from flagstaff_sdk.cache import cache_path, read_cache
from flagstaff_sdk.config import Config
from flagstaff_sdk.data_file import FileSource
from flagstaff_sdk.errors import DataFileError
from flagstaff_sdk.merge import Holding
from flagstaff_sdk.status import ErrorInfo
from flagstaff_sdk.status_board import StatusBoard

log = logging.getLogger("flagstaff_sdk")


def initialize(
    config: Config, board: StatusBoard, files: FileSource | None, *, reads_cache: bool
) -> int:
    """Load local data into `board.store` and refresh the status; the store revision the disk
    cache file holds (-1 when it was not read)."""
    store, clock = board.store, board.clock
    cache_revision = -1
    if files is not None:
        try:
            store.apply(files.load())
            board.note_source_valid()
        except DataFileError as exc:
            board.note_error(ErrorInfo(kind="file", message=str(exc), at=clock.wall()))
    elif reads_cache and config.cache_dir is not None:
        try:
            cached = read_cache(cache_path(config.cache_dir, config.sdk_key))
        except DataFileError as exc:
            log.warning("ignoring the disk cache: %s", exc)
            cached = None
        if cached is not None:
            age = max(0.0, clock.wall() - cached.saved_at)
            store.load(cached.holding, clock.monotonic() - age)
            cache_revision = store.revision
    if store.data is None and config.bootstrap_file is not None:
        _bootstrap(config.bootstrap_file, board)
    board.refresh()
    return cache_revision


def _bootstrap(path: Path, board: StatusBoard) -> None:
    store, clock = board.store, board.clock
    try:
        change = FileSource([path]).load()
        saved_at = path.stat().st_mtime
    except (DataFileError, OSError) as exc:
        log.warning("ignoring the bootstrap file: %s", exc)
        board.note_error(ErrorInfo(kind="file", message=str(exc), at=clock.wall()))
        return
    learned_at = {("flag", key): float("-inf") for key in change.flags}
    learned_at.update({("segment", key): float("-inf") for key in change.segments})
    data = FlagData(flags=change.flags, segments=change.segments)
    age = max(0.0, clock.wall() - saved_at)
    store.load(Holding(data=data, learned_at=learned_at), clock.monotonic() - age)
