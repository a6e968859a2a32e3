"""Diagnostic events (`diagnostic-init` once, `diagnostic` periodically) in LaunchDarkly's shape,
plus Flagstaff extensions in `diagnostic`: `droppedEventsByReason`, `dataSource` (the client's
data-source state, since when, the age of its data, what feeds it: the fleet view's data-source
state and data age) and `closing: true` on the last one a closing client sends. Pure builders;
must not send anything.
"""

from __future__ import annotations

import platform
import uuid
from collections.abc import Mapping
from typing import Any

from flagstaff_sdk.config import LAUNCHDARKLY, Config
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.status import DataSourceStatus

SDK_NAME = "flagstaff-python-sdk"
SDK_VERSION = "0.1.0"


def diagnostic_id(sdk_key: str) -> dict[str, str]:
    return {"diagnosticId": str(uuid.uuid4()), "sdkKeySuffix": sdk_key[-6:]}


def init_event(
    now_ms: int, identity: Mapping[str, str], config: Config, options: EventOptions
) -> dict[str, Any]:
    endpoint = config.endpoints[0]
    wrapper_name, _, wrapper_version = (config.wrapper or "").partition("/")
    timing = config.timing
    return {
        "kind": "diagnostic-init",
        "creationDate": now_ms,
        "id": dict(identity),
        "configuration": {
            "customBaseURI": endpoint.poll_uri != LAUNCHDARKLY.poll_uri,
            "customEventsURI": endpoint.events_uri != LAUNCHDARKLY.events_uri,
            "customStreamURI": endpoint.stream_uri != LAUNCHDARKLY.stream_uri,
            "eventsCapacity": options.capacity,
            "connectTimeoutMillis": int(timing.connect_timeout * 1000),
            "socketTimeoutMillis": int(timing.read_timeout * 1000),
            "eventsFlushIntervalMillis": int(options.flush_interval * 1000),
            "usingProxy": False,
            "streamingDisabled": not config.stream,
            "usingRelayDaemon": False,
            "allAttributesPrivate": options.all_attributes_private,
            "pollingIntervalMillis": int(timing.poll_interval * 1000),
            "userKeysCapacity": options.context_keys_capacity,
            "userKeysFlushIntervalMillis": int(options.context_keys_flush_interval * 1000),
            "diagnosticRecordingIntervalMillis": int(options.diagnostic_interval * 1000),
            "dataStoreType": "memory",
        },
        "sdk": {
            "name": SDK_NAME,
            "version": SDK_VERSION,
            "wrapperName": wrapper_name or None,
            "wrapperVersion": wrapper_version or None,
        },
        "platform": {
            "name": "python",
            "osArch": platform.machine(),
            "osName": "MacOS" if platform.system() == "Darwin" else platform.system(),
            "osVersion": platform.release(),
            "pythonVersion": platform.python_version(),
            "pythonImplementation": platform.python_implementation(),
        },
    }


def periodic_event(
    now_ms: int,
    identity: Mapping[str, str],
    *,
    data_since_ms: int,
    dropped: int,
    dropped_by_reason: Mapping[str, int],
    deduplicated_contexts: int,
    events_in_last_batch: int,
    stream_inits: list[dict[str, Any]],
    data_source: DataSourceStatus | None = None,
    closing: bool = False,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "kind": "diagnostic",
        "creationDate": now_ms,
        "id": dict(identity),
        "dataSinceDate": data_since_ms,
        "droppedEvents": dropped,
        "droppedEventsByReason": dict(dropped_by_reason),
        "deduplicatedUsers": deduplicated_contexts,
        "eventsInLastBatch": events_in_last_batch,
        "streamInits": stream_inits,
    }
    if data_source is not None:
        age = data_source.data_age
        event["dataSource"] = {
            "state": data_source.state.value,
            "stateSince": int(data_source.since * 1000),
            "dataAgeMillis": None if age is None else int(age * 1000),
            "source": data_source.source,
        }
    if closing:
        event["closing"] = True
    return event
