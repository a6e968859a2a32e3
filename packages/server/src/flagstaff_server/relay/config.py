"""The relay's configuration: one frozen value, validated when built (every error names the
setting). Where it comes from (a TOML file and `FLAGSTAFF_RELAY_*` variables) is
`config_source`'s; this module reads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from flagstaff_server.delivery import Limits
from flagstaff_server.settings import REGION_NAME, SettingsError, check_status_peers

Protocol = Literal["auto", "fdv2", "fdv1"]
DEFAULT_PORT = 8030
DEFAULT_REDIS_PREFIX = "launchdarkly"


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentConfig:
    name: str
    """The environment's name on this relay (and in its disk files, /status and metrics)."""
    sdk_key: str
    mobile_key: str = ""
    client_side_id: str = ""
    secure_mode: bool = False
    project: str = "relay"
    redis_prefix: str | None = None
    """None: the relay-wide prefix (each environment needs its own when there are several)."""
    offline_file: Path | None = None
    """Offline mode: serve this LaunchDarkly data file instead of an upstream connection."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RedisConfig:
    url: str
    prefix: str = DEFAULT_REDIS_PREFIX
    check_seconds: float = 5.0
    """How often `{prefix}:$inited` is checked; a missing marker means Redis lost the data."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventsConfig:
    forward: bool = True
    """Accept SDK events and forward them upstream; False answers 202 and drops them."""
    upstream: tuple[str, ...] = ()
    """Base URLs for events (tried in order); empty: the data upstream."""
    max_spool_bytes: int = 1 << 30
    """Unsent event bytes on disk beyond which new posts get 503 + Retry-After."""
    max_body_bytes: int = 10 << 20
    retry_seconds: float = 1.0
    retry_max_seconds: float = 30.0
    probe_seconds: float = 60.0
    """While a fallback event upstream is in use, how often the next payload is offered to the
    preferred ones first (0: every payload), so events return to the preferred region."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayConfig:
    environments: tuple[EnvironmentConfig, ...]
    upstream: tuple[str, ...] = ()
    """Base URLs of the upstream service, preferred region first (polling, and streaming unless
    `stream_upstream` says otherwise)."""
    stream_upstream: tuple[str, ...] = ()
    """Streaming URLs by region, in `upstream`'s order, for services that stream from another
    host (LaunchDarkly: stream.launchdarkly.com beside sdk.launchdarkly.com); empty: `upstream`."""
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    data_dir: Path = Path("relay-data")
    stream: bool = True
    protocol: Protocol = "auto"
    limits: Limits = field(default_factory=Limits)
    heartbeat_seconds: float = 55.0
    offline_interval_seconds: float = 1.0
    """How often offline data files are checked for a replacement (mtime and size)."""
    upstream_timing: dict[str, float] = field(default_factory=dict)
    """Overrides of the SDK's `Timing` for the upstream connections (tests shrink them)."""
    redis: RedisConfig | None = None
    events: EventsConfig = field(default_factory=EventsConfig)
    break_glass_keys: tuple[Path, ...] = ()
    """Public-key files trusted for break-glass documents (docs/break-glass.md)."""
    break_glass_peers: tuple[str, ...] = ()
    """Base URLs an accepted break-glass document is forwarded to."""
    region: str = "local"
    """The region the relay's status page puts it in ([status] region, FLAGSTAFF_REGION)."""
    status_peers: tuple[str, ...] = ()
    """Other nodes' `/status` URLs whose components the status page shows."""
    status_poll_seconds: float = 2.0

    def __post_init__(self) -> None:
        if not self.environments:
            raise SettingsError(
                "the relay needs at least one [environments.NAME] section: pass --config FILE "
                "(docs/examples/relay.toml) or set FLAGSTAFF_RELAY_ENV_<NAME>_SDK_KEY"
            )
        names = [env.name for env in self.environments]
        if len(set(names)) != len(names):
            raise SettingsError("environment names must be unique")
        keys = [env.sdk_key for env in self.environments]
        if len(set(keys)) != len(keys):
            raise SettingsError("two environments have the same sdk_key")
        online = [env.name for env in self.environments if env.offline_file is None]
        if online and not self.upstream:
            raise SettingsError(
                f"environments {', '.join(online)} have no offline_file, so upstream is required"
            )
        if self.stream_upstream and len(self.stream_upstream) != len(self.upstream):
            raise SettingsError("relay.stream_upstream needs one URL per relay.upstream URL")
        for url in (
            *self.upstream,
            *self.stream_upstream,
            *self.events.upstream,
            *self.break_glass_peers,
        ):
            if not url.startswith(("http://", "https://")):
                raise SettingsError(f"upstream URLs must start with http:// or https://: {url!r}")
        if not 0 <= self.port <= 65535:
            raise SettingsError(f"port must be between 0 and 65535, got {self.port}")
        check_status_peers(self.status_peers, "status.peers")
        if not REGION_NAME.fullmatch(self.region):
            raise SettingsError(
                "status.region must be 1-63 lowercase letters, digits, '.', '-' or '_', "
                f"got {self.region!r}"
            )
        if not 0 < self.status_poll_seconds <= 300:
            raise SettingsError(
                f"status.poll_seconds must be above 0 and at most 300, got "
                f"{self.status_poll_seconds}"
            )
        if self.protocol not in ("auto", "fdv2", "fdv1"):
            raise SettingsError(f"protocol must be auto, fdv2 or fdv1, got {self.protocol!r}")
        if not 0 < self.heartbeat_seconds <= 60:
            raise SettingsError(
                f"heartbeat_seconds must be above 0 and at most 60, got {self.heartbeat_seconds}"
            )
        if self.redis is not None:
            if not self.redis.url.startswith(("redis://", "rediss://", "unix://")):
                raise SettingsError(f"redis.url must start with redis://, got {self.redis.url!r}")
            prefixes = [self.redis_prefix(env) for env in self.environments]
            if len(set(prefixes)) != len(prefixes):
                raise SettingsError(
                    "with several environments each needs its own redis_prefix "
                    "(environments.NAME.redis_prefix)"
                )

    def redis_prefix(self, env: EnvironmentConfig) -> str:
        if env.redis_prefix is not None:
            return env.redis_prefix
        return self.redis.prefix if self.redis is not None else DEFAULT_REDIS_PREFIX


def with_overrides(config: RelayConfig, **values: Any) -> RelayConfig:
    """The configuration with command-line values (None: unchanged) applied."""
    given = {name: value for name, value in values.items() if value is not None}
    return replace(config, **given) if given else config
