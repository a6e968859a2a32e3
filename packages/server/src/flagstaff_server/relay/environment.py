"""One configured relay environment's moving parts (its upstream connection or offline file, its
Redis store) and what `/status` and `/metrics` report about it. State only; the relay changes it
on its event loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from flagstaff_sdk.status import DataSourceState

from flagstaff_server.delivery.store import EnvironmentId
from flagstaff_server.relay.config import EnvironmentConfig
from flagstaff_server.relay.daemon_store import RedisDaemonStore
from flagstaff_server.relay.upstream import Upstream


@dataclass(slots=True, kw_only=True)
class RelayEnvironment:
    """One configured environment's moving parts and what /status reports about it."""

    config: EnvironmentConfig
    upstream: Upstream | None = None
    store: RedisDaemonStore | None = None
    offline_state: DataSourceState = DataSourceState.INITIALIZING
    offline_since: float = field(default_factory=time.time)
    offline_error: tuple[str, str, float] | None = None
    data_confirmed: float | None = None
    """Monotonic time the data was last known current (upstream answer, file read, disk)."""
    sync_scheduled: bool = False
    changes: int = 0

    @property
    def env_id(self) -> EnvironmentId:
        return (self.config.project, self.config.name)
