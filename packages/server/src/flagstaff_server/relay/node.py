"""The relay's delivery node: delivery's node unchanged (snapshots, credential index, endpoints,
admission control, disk files), except that an environment is served only once it holds a
complete data set: received from upstream, read from an offline file, or loaded from disk when
it had been complete before the restart.

Behind the control plane a node is current once it caught up with the feed; a relay is never
"caught up" with an upstream it cannot reach, so the decision is per environment.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson

from flagstaff_server.delivery import DeliveryNode, snapshot_file
from flagstaff_server.delivery.store import Environment, EnvironmentId
from flagstaff_server.durable import replace_file

log = logging.getLogger(__name__)

READY_FILE = "ready.json"
"""Per environment, the snapshot seq it had when it first became complete. A snapshot file on
disk is complete only when its seq reached that mark: a crash between the first data and the
(debounced) snapshot write leaves an older, incomplete file, which must not be served."""


class RelayNode(DeliveryNode):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ready: set[EnvironmentId] = set()
        """Environments holding a complete data set; the others' keys get 503 + Retry-After."""
        self.ready_marks: dict[str, int] = {}

    def serves(self, env: Environment) -> bool:
        return (env.project, env.key) in self.ready and env.credentials is not None

    def complete_on_disk(self) -> set[EnvironmentId]:
        """Environments loaded from disk that were complete when written (call after start)."""
        directory = self.config.data_dir
        if directory is not None:
            self.ready_marks = read_marks(directory)
        complete = set()
        for env_id, env in self.store.environments.items():
            mark = self.ready_marks.get(snapshot_file.file_name(*env_id))
            if env.credentials is not None and mark is not None and env.snapshot.seq >= mark:
                complete.add(env_id)
        return complete

    def mark_ready(self, env_id: EnvironmentId) -> None:
        """Record that `env_id` is complete from its current snapshot on (blocking file write
        when new: rare, once per environment)."""
        self.ready.add(env_id)
        name = snapshot_file.file_name(*env_id)
        env = self.store.get(*env_id)
        if env is None or name in self.ready_marks or self.config.data_dir is None:
            return
        self.ready_marks[name] = env.snapshot.seq
        try:
            write_marks(self.config.data_dir, self.ready_marks)
        except OSError as exc:
            log.error("could not record that %s is complete: %s", name, exc)


def read_marks(directory: Path) -> dict[str, int]:
    try:
        raw = orjson.loads((directory / READY_FILE).read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.error("unreadable %s, treating disk snapshots as incomplete: %s", READY_FILE, exc)
        return {}
    marks = raw.get("environments") if isinstance(raw, dict) else None
    if not isinstance(marks, dict):
        return {}
    return {str(k): int(v) for k, v in marks.items() if isinstance(v, int)}


def write_marks(directory: Path, marks: dict[str, int]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    replace_file(directory / READY_FILE, orjson.dumps({"environments": marks}))
