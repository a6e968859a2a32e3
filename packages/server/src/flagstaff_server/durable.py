"""Small files written so that a crash leaves either the old content or the new, never a torn
one: the content goes to a temporary file beside the target, is fsync'd, then renamed over it.
A rename is durable once the directory is fsync'd too (`fsync_directory`), which callers do when a
new name must survive a crash before they acknowledge anything that depends on it.

Files are created readable by their owner only (`PRIVATE_FILE_MODE`): snapshots hold SDK keys,
journals and spools hold the contexts SDKs sent."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE_MODE = 0o600


def replace_file(path: Path, content: bytes) -> None:
    """Atomically give `path` the bytes `content` (via `.<name>.tmp` in the same directory)."""
    temp = path.with_name(f".{path.name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def fsync_directory(directory: Path) -> None:
    """Make the directory's entries (new, renamed or removed names) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
