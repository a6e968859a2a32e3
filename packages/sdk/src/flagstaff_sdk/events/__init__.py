"""LaunchDarkly analytics events for the Flagstaff SDK: summary, index, feature, debug, custom and
identify events, delivered without blocking callers and without silent loss.

`create_event_sink(config)` is what a client uses by default; `sink_factory(EventOptions(...))`
goes into `Config(event_sink=...)` to change capacities, privacy, retries or the spool.
"""

from __future__ import annotations

from collections.abc import Callable

from flagstaff_sdk.config import Config
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.events.processor import EventProcessor
from flagstaff_sdk.events.redaction import ContextFormatter
from flagstaff_sdk.events.stats import DropReason, EventStats

__all__ = [
    "ContextFormatter",
    "DropReason",
    "EventOptions",
    "EventProcessor",
    "EventStats",
    "create_event_sink",
    "sink_factory",
]


def create_event_sink(config: Config) -> EventProcessor:
    return EventProcessor(config, EventOptions())


def sink_factory(options: EventOptions) -> Callable[[Config], EventProcessor]:
    """`Config(event_sink=sink_factory(EventOptions(flush_interval=1.0)))`."""

    def create(config: Config) -> EventProcessor:
        return EventProcessor(config, options)

    return create
