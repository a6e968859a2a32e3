"""Server settings: one frozen value built from CLI arguments and environment variables.

Owns defaults and validation of the knobs `flagstaff serve` accepts; it reads the environment only
in `Settings.from_env`, so everything else receives a `Settings` and never looks at `os.environ`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import urlsplit

from flagstaff_server.delivery import DeliveryConfig, Limits

Role = Literal["all", "api", "delivery", "ingest", "worker"]
ROLES: tuple[Role, ...] = get_args(Role)

DEFAULT_HOST = "127.0.0.1"
# LaunchDarkly's Relay Proxy listens on 8030 too; SDK users pointing at a relay find it familiar.
DEFAULT_PORT = 8030
# An old SDK or mobile key keeps working this long after a reset, so running services can roll
# their configuration without an outage (LaunchDarkly offers a similar expiry on key resets).
DEFAULT_KEY_GRACE_SECONDS = 24 * 60 * 60
# 1 MiB: a flag with thousands of targets is a few hundred kB; a bigger import file needs the
# limit raised.
DEFAULT_API_MAX_BODY_BYTES = 1 << 20

ADMIN_TOKEN_ENV = "FLAGSTAFF_ADMIN_TOKEN"
DATABASE_ENV = "FLAGSTAFF_DATABASE_URL"
REDIS_ENV = "FLAGSTAFF_REDIS_URL"
KEY_GRACE_ENV = "FLAGSTAFF_KEY_GRACE_SECONDS"
MAX_STREAMS_ENV = "FLAGSTAFF_MAX_STREAMS"
FULL_SENDS_ENV = "FLAGSTAFF_FULL_SENDS_PER_SECOND"
RETRY_AFTER_ENV = "FLAGSTAFF_RETRY_AFTER_SECONDS"
MAX_CLIENT_STREAMS_ENV = "FLAGSTAFF_MAX_CLIENT_STREAMS"
CLIENT_EVALUATIONS_ENV = "FLAGSTAFF_CLIENT_EVALUATIONS_PER_SECOND"
MAX_CONNECTION_AGE_ENV = "FLAGSTAFF_MAX_CONNECTION_AGE_SECONDS"
HEARTBEAT_ENV = "FLAGSTAFF_HEARTBEAT_SECONDS"
ANALYTICS_DATABASE_ENV = "FLAGSTAFF_ANALYTICS_DATABASE_URL"
INGEST_DISK_BUDGET_ENV = "FLAGSTAFF_INGEST_DISK_BUDGET_BYTES"
INGEST_PROCESS_ENV = "FLAGSTAFF_INGEST_PROCESS"
API_MAX_BODY_ENV = "FLAGSTAFF_API_MAX_BODY_BYTES"
BREAK_GLASS_KEYS_ENV = "FLAGSTAFF_BREAK_GLASS_KEYS"
BREAK_GLASS_PEERS_ENV = "FLAGSTAFF_BREAK_GLASS_PEERS"
REGION_ENV = "FLAGSTAFF_REGION"
FEED_POLL_ENV = "FLAGSTAFF_FEED_POLL_SECONDS"

DEFAULT_REGION = "local"
# A region name goes into /status, problem bodies and the database's record of the primary.
REGION_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
# How often a feed subscriber with nobody in its process to wake it (a delivery or ingest node
# without Redis, say in a standby region fed only by replication) reads the outbox: a change
# reaches it within replication lag plus this.
NO_PUBLISHER_FEED_POLL_SECONDS = 0.25
WORKER_POLL_ENV = "FLAGSTAFF_WORKER_POLL_SECONDS"
WORKER_LEASE_ENV = "FLAGSTAFF_WORKER_LEASE_SECONDS"
WEBHOOK_RETRY_ENV = "FLAGSTAFF_WEBHOOK_RETRY_SECONDS"
WEBHOOK_GIVE_UP_ENV = "FLAGSTAFF_WEBHOOK_GIVE_UP_SECONDS"
WEBHOOK_TIMEOUT_ENV = "FLAGSTAFF_WEBHOOK_TIMEOUT_SECONDS"
PUBLIC_URL_ENV = "FLAGSTAFF_PUBLIC_URL"
# Webhook retries (docs/workflows.md, "Delivery"): the waits after the 1st, 2nd, ... failure, the
# last repeating; a delivery still failing a day after its change is given up.
DEFAULT_WEBHOOK_RETRY_SECONDS = (1.0, 5.0, 30.0, 120.0, 600.0, 1800.0, 3600.0)
MAX_WEBHOOK_RETRIES = 20
STATUS_PEERS_ENV = "FLAGSTAFF_STATUS_PEERS"
STATUS_POLL_ENV = "FLAGSTAFF_STATUS_POLL_SECONDS"

# The delivery knobs default to the values docs/delivery.md argues for.
_LIMITS = Limits()
_DELIVERY = DeliveryConfig()


class SettingsError(ValueError):
    """A setting has a value the server cannot run with; the message names the setting."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    data_dir: Path = Path("data")
    # None means the SQLite file `data_dir/flagstaff.db`.
    database_url: str | None = None
    # None: the in-process change feed (one process); redis://...: Redis Streams (scale-out).
    redis_url: str | None = None
    role: Role = "all"
    key_grace_seconds: int = DEFAULT_KEY_GRACE_SECONDS
    # The value of FLAGSTAFF_ADMIN_TOKEN: accepted as an unscoped admin access token.
    admin_token: str | None = field(default=None, repr=False)
    # Create the demo project when the store holds no project yet.
    seed_demo: bool = True
    # Management API request bodies beyond this are answered 413 unread (docs/management-api.md).
    api_max_body_bytes: int = DEFAULT_API_MAX_BODY_BYTES
    # Delivery admission control, per node (docs/delivery.md, "Admission control").
    max_streams: int = _LIMITS.max_streams
    full_sends_per_second: float = _LIMITS.full_sends_per_second
    # Base of the Retry-After a shed request gets (each answer: base to twice the base).
    retry_after_seconds: float = _LIMITS.retry_after_seconds
    # Browser/mobile/OFREP streams (within max_streams) and their fresh evaluations per second.
    max_client_streams: int = _LIMITS.max_client_streams
    client_evaluations_per_second: float = _LIMITS.evaluations_per_second
    # 0 turns connection ageing off.
    max_connection_age_seconds: float = _LIMITS.max_connection_age_seconds
    # Idle streams get a heartbeat this often; SDKs treat about 5 minutes of silence as dead.
    heartbeat_seconds: float = _DELIVERY.heartbeat_seconds
    # Event analytics (docs/ingestion.md); None means the SQLite file `data_dir/analytics.db`.
    analytics_database_url: str | None = None
    # Unprocessed event-log bytes beyond which event posts get 503 + Retry-After.
    ingest_disk_budget_bytes: int = 2 << 30
    # Process the event journal in this process (off: it only journals, for a bench or a node
    # whose journal another process consumes).
    ingest_process: bool = True
    # Public-key files whose keys may sign break-glass documents (docs/break-glass.md); none:
    # this node refuses every pushed override.
    break_glass_keys: tuple[Path, ...] = ()
    # Base URLs of the nodes and relays an accepted document is forwarded to.
    break_glass_peers: tuple[str, ...] = ()
    # The region this process runs in (docs/operations/regions.md); shown in /status.
    region: str = DEFAULT_REGION
    # How often an idle change-feed subscriber reads the outbox; None: the default below.
    feed_poll_seconds: float | None = None
    # The worker role (docs/workflows.md): how often it looks for due work, and how long a job's
    # lease lasts (after a crash, a peer takes over this much later at most).
    worker_poll_seconds: float = 1.0
    worker_lease_seconds: float = 30.0
    # Webhook and chat delivery by the worker (docs/workflows.md, "Delivery").
    webhook_retry_seconds: tuple[float, ...] = DEFAULT_WEBHOOK_RETRY_SECONDS
    webhook_give_up_seconds: float = 24 * 60 * 60
    webhook_timeout_seconds: float = 10.0
    # Where people reach this Flagstaff's UI, for the links in chat messages; None: this
    # process's own address (http://host:port).
    public_url: str | None = None
    # URLs of other nodes' /status whose components this node's status page shows
    # (docs/operations/regions.md, "Status page"), and how often they are read.
    status_peers: tuple[str, ...] = ()
    status_poll_seconds: float = 2.0

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise SettingsError(f"port must be between 0 and 65535, got {self.port}")
        if self.role not in ROLES:
            raise SettingsError(f"role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if self.key_grace_seconds < 0:
            raise SettingsError(
                f"key grace period must be zero or more seconds, got {self.key_grace_seconds}"
            )
        if self.redis_url is not None and not self.redis_url.startswith(("redis://", "rediss://")):
            raise SettingsError(f"the Redis URL must start with redis://, got {self.redis_url!r}")
        if self.admin_token is not None and not self.admin_token.strip():
            raise SettingsError(f"{ADMIN_TOKEN_ENV} is set but empty")
        if self.max_streams < 1:
            raise SettingsError(f"max streams must be at least 1, got {self.max_streams}")
        if not self.full_sends_per_second > 0:
            raise SettingsError(
                f"full sends per second must be above 0, got {self.full_sends_per_second}"
            )
        if not self.retry_after_seconds >= 1:
            raise SettingsError(
                f"retry after seconds must be at least 1, got {self.retry_after_seconds}"
            )
        if self.max_client_streams < 1:
            raise SettingsError(
                f"max client streams must be at least 1, got {self.max_client_streams}"
            )
        if not self.client_evaluations_per_second > 0:
            raise SettingsError(
                "client evaluations per second must be above 0, "
                f"got {self.client_evaluations_per_second}"
            )
        if not self.max_connection_age_seconds >= 0:
            raise SettingsError(
                "max connection age must be zero (off) or more seconds, "
                f"got {self.max_connection_age_seconds}"
            )
        if not 0 < self.heartbeat_seconds <= 60:
            raise SettingsError(
                f"heartbeat must be above 0 and at most 60 seconds, got {self.heartbeat_seconds}"
            )
        if self.api_max_body_bytes < 1:
            raise SettingsError(
                f"the API body limit must be at least 1 byte, got {self.api_max_body_bytes}"
            )
        check_status_peers(self.status_peers, STATUS_PEERS_ENV)
        if not 0 < self.status_poll_seconds <= 300:
            raise SettingsError(
                f"{STATUS_POLL_ENV} must be above 0 and at most 300 seconds, "
                f"got {self.status_poll_seconds}"
            )
        for peer in self.break_glass_peers:
            if not peer.startswith(("http://", "https://")):
                raise SettingsError(
                    f"{BREAK_GLASS_PEERS_ENV} URLs must start with http:// or https://: {peer!r}"
                )
        if not REGION_NAME.fullmatch(self.region):
            raise SettingsError(
                f"{REGION_ENV} must be 1-63 lowercase letters, digits, '.', '-' or '_' "
                f"(starting with a letter or digit), got {self.region!r}"
            )
        if self.feed_poll_seconds is not None and not 0 < self.feed_poll_seconds <= 60:
            raise SettingsError(
                f"{FEED_POLL_ENV} must be above 0 and at most 60 seconds, "
                f"got {self.feed_poll_seconds}"
            )
        if not 0 < self.worker_poll_seconds <= 3600:
            raise SettingsError(
                f"{WORKER_POLL_ENV} must be above 0 and at most 3600, "
                f"got {self.worker_poll_seconds}"
            )
        if not self.worker_lease_seconds > self.worker_poll_seconds:
            raise SettingsError(
                f"{WORKER_LEASE_ENV} must be longer than the poll interval "
                f"({self.worker_poll_seconds}s), got {self.worker_lease_seconds}"
            )
        if not 1 <= len(self.webhook_retry_seconds) <= MAX_WEBHOOK_RETRIES or not all(
            0 < delay <= 86_400 for delay in self.webhook_retry_seconds
        ):
            raise SettingsError(
                f"{WEBHOOK_RETRY_ENV} is 1 to {MAX_WEBHOOK_RETRIES} comma-separated waits, each "
                f"above 0 and at most 86400 seconds, got {self.webhook_retry_seconds}"
            )
        if not self.webhook_give_up_seconds > 0:
            raise SettingsError(
                f"{WEBHOOK_GIVE_UP_ENV} must be above 0, got {self.webhook_give_up_seconds}"
            )
        if not 0 < self.webhook_timeout_seconds <= 120:
            raise SettingsError(
                f"{WEBHOOK_TIMEOUT_ENV} must be above 0 and at most 120 seconds, "
                f"got {self.webhook_timeout_seconds}"
            )
        if self.public_url is not None and not self.public_url.startswith(("http://", "https://")):
            raise SettingsError(
                f"{PUBLIC_URL_ENV} must start with http:// or https://, got {self.public_url!r}"
            )
        if self.ingest_disk_budget_bytes < 1:
            raise SettingsError(
                f"ingest disk budget must be at least 1 byte, got {self.ingest_disk_budget_bytes}"
            )

    @property
    def delivery_limits(self) -> Limits:
        return Limits(
            max_streams=self.max_streams,
            full_sends_per_second=self.full_sends_per_second,
            # a burst of two seconds' worth, the ratio of the defaults
            full_send_burst=max(1, round(2 * self.full_sends_per_second)),
            retry_after_seconds=self.retry_after_seconds,
            max_connection_age_seconds=self.max_connection_age_seconds,
            max_client_streams=self.max_client_streams,
            evaluations_per_second=self.client_evaluations_per_second,
            evaluation_burst=max(1, round(2 * self.client_evaluations_per_second)),
        )

    @property
    def resolved_feed_poll_seconds(self) -> float | None:
        """The feed's idle poll interval: the setting, else sub-second for a process that runs no
        API and has no Redis (no commit in the process wakes its subscribers, so only polling
        brings changes), else None (the feed's own default: publishes or Redis wake it)."""
        if self.feed_poll_seconds is not None:
            return self.feed_poll_seconds
        if self.redis_url is None and not self.serves_api:
            return NO_PUBLISHER_FEED_POLL_SECONDS
        return None

    @property
    def resolved_public_url(self) -> str:
        """The UI's base URL for links: the setting, else this process's address."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'flagstaff.db').resolve()}"

    @property
    def serves_api(self) -> bool:
        return self.role in ("all", "api")

    @property
    def serves_delivery(self) -> bool:
        return self.role in ("all", "delivery")

    @property
    def serves_ingest(self) -> bool:
        return self.role in ("all", "ingest")

    @property
    def serves_worker(self) -> bool:
        return self.role in ("all", "worker")

    @property
    def resolved_analytics_url(self) -> str:
        if self.analytics_database_url:
            return self.analytics_database_url
        return f"sqlite:///{(self.data_dir / 'analytics.db').resolve()}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **given: object) -> Settings:
        """Settings from explicit values (CLI arguments), completed from the environment."""
        environ = os.environ if environ is None else environ
        values: dict[str, object] = {}
        if environ.get(ADMIN_TOKEN_ENV):
            values["admin_token"] = environ[ADMIN_TOKEN_ENV]
        if environ.get(DATABASE_ENV):
            values["database_url"] = environ[DATABASE_ENV]
        if environ.get(REDIS_ENV):
            values["redis_url"] = environ[REDIS_ENV]
        if environ.get(ANALYTICS_DATABASE_ENV):
            values["analytics_database_url"] = environ[ANALYTICS_DATABASE_ENV]
        if environ.get(INGEST_DISK_BUDGET_ENV):
            values["ingest_disk_budget_bytes"] = parse_int(
                environ[INGEST_DISK_BUDGET_ENV], INGEST_DISK_BUDGET_ENV
            )
        if environ.get(API_MAX_BODY_ENV):
            values["api_max_body_bytes"] = parse_int(environ[API_MAX_BODY_ENV], API_MAX_BODY_ENV)
        if environ.get(INGEST_PROCESS_ENV):
            values["ingest_process"] = environ[INGEST_PROCESS_ENV].lower() not in ("0", "false")
        if environ.get(BREAK_GLASS_KEYS_ENV):
            values["break_glass_keys"] = tuple(
                Path(path) for path in split_list(environ[BREAK_GLASS_KEYS_ENV])
            )
        if environ.get(BREAK_GLASS_PEERS_ENV):
            values["break_glass_peers"] = split_list(environ[BREAK_GLASS_PEERS_ENV])
        if environ.get(REGION_ENV):
            values["region"] = environ[REGION_ENV]
        if environ.get(PUBLIC_URL_ENV):
            values["public_url"] = environ[PUBLIC_URL_ENV]
        if environ.get(WEBHOOK_RETRY_ENV):
            values["webhook_retry_seconds"] = tuple(
                parse_float(part, WEBHOOK_RETRY_ENV)
                for part in split_list(environ[WEBHOOK_RETRY_ENV])
            )
        if environ.get(STATUS_PEERS_ENV):
            values["status_peers"] = split_list(environ[STATUS_PEERS_ENV])
        if environ.get(KEY_GRACE_ENV):
            values["key_grace_seconds"] = parse_int(environ[KEY_GRACE_ENV], KEY_GRACE_ENV)
        if environ.get(MAX_STREAMS_ENV):
            values["max_streams"] = parse_int(environ[MAX_STREAMS_ENV], MAX_STREAMS_ENV)
        if environ.get(MAX_CLIENT_STREAMS_ENV):
            values["max_client_streams"] = parse_int(
                environ[MAX_CLIENT_STREAMS_ENV], MAX_CLIENT_STREAMS_ENV
            )
        for name, env in (
            ("full_sends_per_second", FULL_SENDS_ENV),
            ("retry_after_seconds", RETRY_AFTER_ENV),
            ("client_evaluations_per_second", CLIENT_EVALUATIONS_ENV),
            ("max_connection_age_seconds", MAX_CONNECTION_AGE_ENV),
            ("heartbeat_seconds", HEARTBEAT_ENV),
            ("feed_poll_seconds", FEED_POLL_ENV),
            ("worker_poll_seconds", WORKER_POLL_ENV),
            ("worker_lease_seconds", WORKER_LEASE_ENV),
            ("status_poll_seconds", STATUS_POLL_ENV),
            ("webhook_give_up_seconds", WEBHOOK_GIVE_UP_ENV),
            ("webhook_timeout_seconds", WEBHOOK_TIMEOUT_ENV),
        ):
            if environ.get(env):
                values[name] = parse_float(environ[env], env)
        values.update({name: value for name, value in given.items() if value is not None})
        return cls(**values)  # type: ignore[arg-type]


def check_status_peers(peers: tuple[str, ...], name: str) -> None:
    """Each peer is the http(s) URL of a node's `/status`, with a host."""
    for peer in peers:
        try:
            parts = urlsplit(peer)
        except ValueError:
            parts = urlsplit("")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise SettingsError(
                f"{name} takes URLs of other nodes' /status (http://host:port/status), got {peer!r}"
            )


def split_list(text: str) -> tuple[str, ...]:
    """A comma-separated list setting, blanks dropped."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def parse_int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {text!r}") from None


def parse_float(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise SettingsError(f"{name} must be a finite number, got {text!r}")
    return value
