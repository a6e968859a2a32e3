"""What the relay reports about one environment: its connection state (serving its disk copy
counts as interrupted until upstream answers) and its `/status` entry in LaunchDarkly Relay's
shape, keys masked. Reads only; changes nothing.
"""

from __future__ import annotations

import time
from typing import Any

from flagstaff_sdk.status import DataSourceState

from flagstaff_server.relay.environment import RelayEnvironment
from flagstaff_server.relay.node import RelayNode


def connection_state(state: RelayEnvironment, node: RelayNode) -> tuple[DataSourceState, float]:
    """The environment's connection state and since when (epoch seconds)."""
    if state.upstream is None:
        return state.offline_state, state.offline_since
    status = state.upstream.status
    if status.state is DataSourceState.INITIALIZING and state.env_id in node.ready:
        # serving its disk copy, upstream not reached yet
        return DataSourceState.INTERRUPTED, status.since
    return status.state, status.since


def environment_status(state: RelayEnvironment, node: RelayNode) -> dict[str, Any]:
    """The environment's entry in the relay's `/status` (LaunchDarkly Relay's shape)."""
    env = node.store.get(*state.env_id)
    connection, since = connection_state(state, node)
    last_error: dict[str, Any] | None = None
    if state.upstream is not None and state.upstream.status.last_error is not None:
        error = state.upstream.status.last_error
        last_error = {"kind": error.kind, "message": error.message, "time": error.at}
        if error.status is not None:
            last_error["status"] = error.status
    elif state.offline_error is not None:
        kind, message, at = state.offline_error
        last_error = {"kind": kind, "message": message, "time": at}
    snapshot = env.snapshot if env is not None else None
    now = time.monotonic()
    age = None if state.data_confirmed is None else max(0.0, now - state.data_confirmed)
    if connection is DataSourceState.VALID:
        age = 0.0
    body: dict[str, Any] = {
        "envId": state.config.client_side_id or None,
        "project": state.config.project,
        "sdkKey": _mask(state.config.sdk_key),
        "mobileKey": _mask(state.config.mobile_key),
        "source": "offline" if state.upstream is None else "upstream",
        "serving": state.env_id in node.ready,
        "status": "connected" if connection is DataSourceState.VALID else "disconnected",
        "connectionStatus": {
            "state": connection.value,
            "stateSince": since,
            "lastError": last_error,
        },
        "dataAgeSeconds": age,
        "dataVersion": None if snapshot is None else snapshot.seq,
        "flags": 0 if snapshot is None else len(snapshot.flags),
        "segments": 0 if snapshot is None else len(snapshot.segments),
    }
    if state.upstream is not None:
        body["upstream"] = state.upstream.status.endpoint
        body["upstreamSource"] = state.upstream.status.source
    if state.store is not None:
        body["dataStoreStatus"] = {
            "state": "VALID" if state.store.available else "INTERRUPTED",
            "database": "redis",
            "dbPrefix": state.store.prefix,
            "lastError": state.store.last_error,
        }
    return body


def _mask(key: str) -> str | None:
    if not key:
        return None
    return "*" * max(0, len(key) - 4) + key[-4:]
