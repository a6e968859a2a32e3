"""How a client is configured: SDK key, endpoints (regions), data-source choices and timing.

Values only, validated when built; must not open connections or files.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import httpx

from flagstaff_sdk.clock import Clock, SystemClock
from flagstaff_sdk.errors import ConfigError
from flagstaff_sdk.event_sink import EventSink
from flagstaff_sdk.hook import Hook

if TYPE_CHECKING:
    from flagstaff_sdk.source import DataSource

USER_AGENT = "FlagstaffPythonSDK/0.1.0"
"""What every request of this SDK (flag data and events) names itself as."""

DeliveryProtocol = Literal["auto", "fdv2", "fdv1"]
"""`auto`: FDv2, falling back to FDv1 per endpoint on `X-LD-FD-Fallback: true` or 404."""


def _clean_uri(uri: str, what: str) -> str:
    if not uri.startswith(("http://", "https://")):
        raise ConfigError(f"{what} must be an http:// or https:// URI, got {uri!r}")
    return uri.rstrip("/")


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """One region: where to stream, poll and send events. Trailing slashes are dropped."""

    stream_uri: str
    poll_uri: str
    events_uri: str
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stream_uri", _clean_uri(self.stream_uri, "stream_uri"))
        object.__setattr__(self, "poll_uri", _clean_uri(self.poll_uri, "poll_uri"))
        object.__setattr__(self, "events_uri", _clean_uri(self.events_uri, "events_uri"))
        if not self.name:
            object.__setattr__(self, "name", self.poll_uri)

    @classmethod
    def at(cls, base_uri: str, *, name: str = "") -> Endpoint:
        """A Flagstaff node or relay serving every path from one origin."""
        return cls(stream_uri=base_uri, poll_uri=base_uri, events_uri=base_uri, name=name)


LAUNCHDARKLY = Endpoint(
    stream_uri="https://stream.launchdarkly.com",
    poll_uri="https://sdk.launchdarkly.com",
    events_uri="https://events.launchdarkly.com",
    name="launchdarkly",
)

EventSinkFactory = Callable[["Config"], EventSink]
"""`Config(event_sink=...)`: builds the sink a client reports events to."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Retry, polling and failover constants; the defaults follow LaunchDarkly's SDKs.

    Tests shrink them; nothing else should need to.
    """

    initial_retry_delay: float = 1.0
    max_retry_delay: float = 30.0
    jitter: float = 0.5
    """Up to this fraction of each delay is taken off at random, so clients spread out."""
    reset_after: float = 60.0
    """A stream healthy this long starts its next backoff from the beginning again."""
    extended_retry_delay: float = 300.0
    extended_max_retry_delay: float = 3600.0
    """The regime after 401/403 and other unexpected statuses: slow, but never giving up."""
    poll_interval: float = 30.0
    poll_fallback_after: float = 10.0
    """Streaming not VALID for this long: poll alongside until a stream is VALID again."""
    initial_poll_after: float = 1.0
    """At start, no stream VALID this soon: poll once to initialize (the polling initializer);
    0 polls first, as LaunchDarkly's FDv2 default chain does."""
    failover_after_failures: int = 2
    """Consecutive failures against one endpoint before the next endpoint is tried."""
    probe_interval: float = 60.0
    """While on a fallback endpoint, how often the preferred one is probed to return to it."""
    connect_timeout: float = 10.0
    read_timeout: float = 15.0
    stream_read_timeout: float = 300.0
    """No byte (not even a heartbeat) for this long means the stream is dead."""
    cache_write_delay: float = 1.0
    """Changes are written to the disk cache at most this often (debounced)."""
    file_reload_interval: float = 1.0

    def __post_init__(self) -> None:
        for name in (
            "initial_retry_delay",
            "max_retry_delay",
            "reset_after",
            "extended_retry_delay",
            "extended_max_retry_delay",
            "poll_interval",
            "probe_interval",
            "connect_timeout",
            "read_timeout",
            "stream_read_timeout",
            "file_reload_interval",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"Timing.{name} must be positive")
        if not 0.0 <= self.jitter < 1.0:
            raise ConfigError("Timing.jitter must be in [0, 1)")
        if min(self.poll_fallback_after, self.initial_poll_after, self.cache_write_delay) < 0:
            raise ConfigError(
                "Timing.poll_fallback_after, initial_poll_after and cache_write_delay must be >= 0"
            )
        if self.failover_after_failures < 1:
            raise ConfigError("Timing.failover_after_failures must be at least 1")


@dataclass(frozen=True, slots=True)
class Config:
    """Everything a client needs. Give `endpoints` (regions, preferred first) or `base_uri`.

    `offline`: no network; data comes from `data_files`, else the disk cache, else defaults.
    `data_files`: LaunchDarkly data files (`flags`, `segments`, `flagValues`) used instead of
    the network; `auto_reload` re-reads them when they change. `data_source` replaces every
    built-in source (e.g. `TestData`).
    """

    sdk_key: str
    _: KW_ONLY  # `Config("sdk-...", base_uri=...)`, as LaunchDarkly's SDKs are configured
    endpoints: tuple[Endpoint, ...] = ()
    base_uri: str | None = None
    stream: bool = True
    protocol: DeliveryProtocol = "auto"
    init_timeout: float = 5.0
    cache_dir: Path | None = None
    bootstrap_file: Path | None = None
    """A LaunchDarkly data file to start from when the disk cache has nothing (an initializer:
    the network replaces it as soon as it answers)."""
    offline: bool = False
    data_files: tuple[Path, ...] = ()
    auto_reload: bool = False
    data_source: DataSource | None = None
    send_events: bool = True
    event_sink: EventSinkFactory | None = None
    hooks: tuple[Hook, ...] = ()
    """Run around every evaluation, in order (`flagstaff_sdk.hook`; OpenTelemetry:
    `flagstaff_sdk.otel.OpenTelemetryHook`)."""
    timing: Timing = field(default_factory=Timing)
    application_id: str | None = None
    application_version: str | None = None
    wrapper: str | None = None
    http_transport: httpx.AsyncBaseTransport | None = None
    """Replaces httpx's network transport for every request (mTLS, proxies, tests)."""
    clock: Clock = field(default_factory=SystemClock)
    random: Callable[[], float] = random.random

    def __post_init__(self) -> None:
        if not isinstance(self.sdk_key, str):
            raise ConfigError("sdk_key must be a string")
        if self.endpoints and self.base_uri is not None:
            raise ConfigError("give either endpoints or base_uri, not both")
        if self.base_uri is not None:
            object.__setattr__(self, "endpoints", (Endpoint.at(self.base_uri),))
        elif not self.endpoints:
            object.__setattr__(self, "endpoints", (LAUNCHDARKLY,))
        object.__setattr__(self, "endpoints", tuple(self.endpoints))
        if self.protocol not in ("auto", "fdv2", "fdv1"):
            raise ConfigError(f"protocol must be 'auto', 'fdv2' or 'fdv1', got {self.protocol!r}")
        if self.init_timeout < 0:
            raise ConfigError("init_timeout must be >= 0")
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))
        if self.bootstrap_file is not None:
            object.__setattr__(self, "bootstrap_file", Path(self.bootstrap_file))
        object.__setattr__(self, "data_files", tuple(Path(p) for p in self.data_files))
        object.__setattr__(self, "hooks", tuple(self.hooks))
        for hook in self.hooks:
            if not isinstance(hook, Hook):
                raise ConfigError(f"hooks must be flagstaff_sdk.hook.Hook instances, got {hook!r}")
        if self.auto_reload and not self.data_files:
            raise ConfigError("auto_reload needs data_files")

    def headers(self, user_agent: str) -> dict[str, str]:
        """Request headers every SDK request carries (protocol reference §1.2)."""
        headers = {"Authorization": self.sdk_key, "User-Agent": user_agent}
        tags = []
        if self.application_id:
            tags.append(f"application-id/{self.application_id}")
        if self.application_version:
            tags.append(f"application-version/{self.application_version}")
        if tags:
            headers["X-LaunchDarkly-Tags"] = " ".join(tags)
        if self.wrapper:
            headers["X-LaunchDarkly-Wrapper"] = self.wrapper
        return headers
