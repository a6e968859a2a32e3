"""LaunchDarkly analytics events for the Flagstaff SDK: summary, index, feature, debug, custom and
identify events, delivered without blocking callers and without silent loss.

`create_event_sink(config)` is what a client uses by default; `sink_factory(EventOptions(...))`
goes into `Config(event_sink=...)` to change capacities, privacy, retries or the spool, and keeps
the processor it made so its counters can be read: `factory.stats()`.
"""

from __future__ import annotations

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
    "EventProcessorFactory",
    "EventStats",
    "create_event_sink",
    "sink_factory",
]


def create_event_sink(config: Config) -> EventProcessor:
    return EventProcessor(config, EventOptions())


class EventProcessorFactory:
    """Builds the processor for a client (`Config(event_sink=factory)`) and keeps it."""

    def __init__(self, options: EventOptions) -> None:
        self.options = options
        self.processor: EventProcessor | None = None

    def __call__(self, config: Config) -> EventProcessor:
        self.processor = EventProcessor(config, self.options)
        return self.processor

    def stats(self) -> EventStats | None:
        """Delivery and drop counters of the processor made last (None before any client)."""
        return None if self.processor is None else self.processor.stats()


def sink_factory(options: EventOptions | None = None) -> EventProcessorFactory:
    """`events = sink_factory(EventOptions(flush_interval=1.0))`, then
    `Client(Config(..., event_sink=events))` and later `events.stats()`."""
    return EventProcessorFactory(options if options is not None else EventOptions())
