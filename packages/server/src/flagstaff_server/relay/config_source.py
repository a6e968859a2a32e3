"""Where the relay's configuration comes from: a TOML file (stdlib `tomllib`), completed by
`FLAGSTAFF_RELAY_*` environment variables (which win), turned into a `RelayConfig`. Reads the file
and the environment only in `load_config`; every error names the setting.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flagstaff_sdk.config import Timing
from flagstaff_sdk.errors import ConfigError

from flagstaff_server.delivery import Limits
from flagstaff_server.relay.config import (
    DEFAULT_PORT,
    DEFAULT_REDIS_PREFIX,
    EnvironmentConfig,
    EventsConfig,
    RedisConfig,
    RelayConfig,
)
from flagstaff_server.settings import (
    BREAK_GLASS_KEYS_ENV,
    BREAK_GLASS_PEERS_ENV,
    REGION_ENV,
    STATUS_PEERS_ENV,
    STATUS_POLL_ENV,
    SettingsError,
)

ENV_PREFIX = "FLAGSTAFF_RELAY_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def load_config(path: Path | None, environ: Mapping[str, str] | None = None) -> RelayConfig:
    """The configuration in `path` (TOML), with environment variables winning over it.
    Raises SettingsError naming the setting for anything unusable."""
    environ = os.environ if environ is None else environ
    document: dict[str, Any] = {}
    if path is not None:
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path} is not valid TOML: {exc}") from exc
    base = path.parent if path is not None else Path.cwd()
    return parse_config(document, environ, base=base)


def parse_config(
    document: Mapping[str, Any], environ: Mapping[str, str], *, base: Path
) -> RelayConfig:
    main = _table(document, "relay")
    main = {**main, **_main_from_env(environ)}
    environments = _environments(document, environ, base)
    defaults = Limits()
    full_sends = _float(main, "full_sends_per_second", defaults.full_sends_per_second, "relay")
    if full_sends <= 0:
        raise SettingsError(f"relay.full_sends_per_second must be above 0, got {full_sends}")
    max_client_streams = _int(main, "max_client_streams", defaults.max_client_streams, "relay")
    if max_client_streams < 1:
        raise SettingsError(
            f"relay.max_client_streams must be at least 1, got {max_client_streams}"
        )
    evaluations = _float(
        main, "client_evaluations_per_second", defaults.evaluations_per_second, "relay"
    )
    if evaluations <= 0:
        raise SettingsError(
            f"relay.client_evaluations_per_second must be above 0, got {evaluations}"
        )
    limits = Limits(
        max_streams=_int(main, "max_streams", defaults.max_streams, "relay"),
        full_sends_per_second=full_sends,
        # bursts of two seconds' worth, as `flagstaff serve` does
        full_send_burst=max(1, round(2 * full_sends)),
        max_connection_age_seconds=_float(
            main, "max_connection_age_seconds", defaults.max_connection_age_seconds, "relay"
        ),
        max_client_streams=max_client_streams,
        evaluations_per_second=evaluations,
        evaluation_burst=max(1, round(2 * evaluations)),
    )
    timing = _table(main, "upstream_timing", "relay")
    upstream_timing = {str(k): _number(v, f"relay.upstream_timing.{k}") for k, v in timing.items()}
    known = {f.name for f in dataclasses.fields(Timing)}
    for name in upstream_timing:
        if name not in known:
            raise SettingsError(
                f"relay.upstream_timing.{name} is not a setting (one of {', '.join(sorted(known))})"
            )
    try:
        Timing(**upstream_timing)  # type: ignore[arg-type]
    except ConfigError as exc:
        raise SettingsError(f"relay.upstream_timing: {exc}") from exc
    redis_table = {**_table(document, "redis"), **_section_from_env(environ, "REDIS_")}
    redis_config = None
    if redis_table.get("url"):
        redis_config = RedisConfig(
            url=_str(redis_table, "url", "", "redis"),
            prefix=_str(redis_table, "prefix", DEFAULT_REDIS_PREFIX, "redis"),
            check_seconds=_float(redis_table, "check_seconds", 5.0, "redis"),
        )
    events_table = {**_table(document, "events"), **_section_from_env(environ, "EVENTS_")}
    events = EventsConfig(
        forward=_bool(events_table, "forward", True, "events"),
        upstream=_urls(events_table, "upstream", "events"),
        max_spool_bytes=_int(events_table, "max_spool_bytes", 1 << 30, "events"),
        max_body_bytes=_int(events_table, "max_body_bytes", 10 << 20, "events"),
        retry_seconds=_float(events_table, "retry_seconds", 1.0, "events"),
        retry_max_seconds=_float(events_table, "retry_max_seconds", 30.0, "events"),
        probe_seconds=_float(events_table, "probe_seconds", 60.0, "events"),
    )
    break_glass = dict(_table(document, "break_glass"))
    if environ.get(BREAK_GLASS_KEYS_ENV):
        break_glass["keys"] = environ[BREAK_GLASS_KEYS_ENV]
    if environ.get(BREAK_GLASS_PEERS_ENV):
        break_glass["peers"] = environ[BREAK_GLASS_PEERS_ENV]
    status = dict(_table(document, "status"))
    for key, env in (("peers", STATUS_PEERS_ENV), ("poll_seconds", STATUS_POLL_ENV)):
        if environ.get(env):
            status[key] = environ[env]
    if environ.get(REGION_ENV):
        status["region"] = environ[REGION_ENV]
    protocol = _str(main, "protocol", "auto", "relay")
    if protocol not in ("auto", "fdv2", "fdv1"):
        raise SettingsError(f"relay.protocol must be auto, fdv2 or fdv1, got {protocol!r}")
    return RelayConfig(
        environments=environments,
        upstream=_urls(main, "upstream", "relay"),
        stream_upstream=_urls(main, "stream_upstream", "relay"),
        host=_str(main, "host", "127.0.0.1", "relay"),
        port=_int(main, "port", DEFAULT_PORT, "relay"),
        data_dir=_path(_str(main, "data_dir", "relay-data", "relay"), base),
        stream=_bool(main, "stream", True, "relay"),
        protocol=protocol,  # type: ignore[arg-type]
        limits=limits,
        heartbeat_seconds=_float(main, "heartbeat_seconds", 55.0, "relay"),
        offline_interval_seconds=_float(main, "offline_interval_seconds", 1.0, "relay"),
        upstream_timing=upstream_timing,
        redis=redis_config,
        events=events,
        break_glass_keys=tuple(
            _path(text, base) for text in _list(break_glass, "keys", "break_glass")
        ),
        break_glass_peers=_urls(break_glass, "peers", "break_glass"),
        region=_str(status, "region", "local", "status"),
        status_peers=_list(status, "peers", "status"),
        status_poll_seconds=_float(status, "poll_seconds", 2.0, "status"),
    )


_MAIN_ENV = {
    "HOST": "host",
    "PORT": "port",
    "DATA_DIR": "data_dir",
    "UPSTREAM": "upstream",
    "STREAM_UPSTREAM": "stream_upstream",
    "STREAM": "stream",
    "PROTOCOL": "protocol",
    "MAX_STREAMS": "max_streams",
    "FULL_SENDS_PER_SECOND": "full_sends_per_second",
    "MAX_CONNECTION_AGE_SECONDS": "max_connection_age_seconds",
    "MAX_CLIENT_STREAMS": "max_client_streams",
    "CLIENT_EVALUATIONS_PER_SECOND": "client_evaluations_per_second",
    "HEARTBEAT_SECONDS": "heartbeat_seconds",
}


def _main_from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    return {
        setting: environ[ENV_PREFIX + name]
        for name, setting in _MAIN_ENV.items()
        if environ.get(ENV_PREFIX + name)
    }


def _section_from_env(environ: Mapping[str, str], section: str) -> dict[str, Any]:
    """`FLAGSTAFF_RELAY_REDIS_URL` → {"url": ...} for section "REDIS_"."""
    prefix = ENV_PREFIX + section
    return {
        name[len(prefix) :].lower(): value
        for name, value in environ.items()
        if name.startswith(prefix) and value
    }


_ENV_FIELDS = ("sdk_key", "mobile_key", "client_side_id", "secure_mode", "project")


def _environments(
    document: Mapping[str, Any], environ: Mapping[str, str], base: Path
) -> tuple[EnvironmentConfig, ...]:
    tables = dict(_table(document, "environments"))
    # FLAGSTAFF_RELAY_ENV_<NAME>_<FIELD>: <NAME> matches a configured name case-insensitively
    # (dashes as underscores), or adds an environment named in lower case.
    for variable, value in environ.items():
        if not variable.startswith(ENV_PREFIX + "ENV_") or not value:
            continue
        rest = variable[len(ENV_PREFIX + "ENV_") :]
        for setting in (*_ENV_FIELDS, "redis_prefix", "offline_file"):
            suffix = "_" + setting.upper()
            if rest.endswith(suffix) and len(rest) > len(suffix):
                wanted = rest[: -len(suffix)]
                name = next(
                    (n for n in tables if n.upper().replace("-", "_") == wanted), wanted.lower()
                )
                tables[name] = {**_table(tables, name, "environments"), setting: value}
                break
    environments = []
    for name in tables:
        where = f"environments.{name}"
        if not _NAME.match(name):
            raise SettingsError(f"{where}: names use letters, digits, '.', '_' and '-'")
        table = _table(tables, name, "environments")
        sdk_key = _str(table, "sdk_key", "", where)
        if not sdk_key:
            raise SettingsError(f"{where}.sdk_key is required")
        offline = table.get("offline_file")
        environments.append(
            EnvironmentConfig(
                name=name,
                sdk_key=sdk_key,
                mobile_key=_str(table, "mobile_key", "", where),
                client_side_id=_str(table, "client_side_id", "", where),
                secure_mode=_bool(table, "secure_mode", False, where),
                project=_str(table, "project", "relay", where),
                redis_prefix=table.get("redis_prefix") and _str(table, "redis_prefix", "", where),
                offline_file=None
                if not offline
                else _path(_str(table, "offline_file", "", where), base),
            )
        )
    return tuple(environments)


# value readers ---------------------------------------------------------------------------------


def _table(document: Mapping[str, Any], name: str, parent: str = "") -> Mapping[str, Any]:
    value = document.get(name, {})
    if not isinstance(value, Mapping):
        where = f"{parent}.{name}" if parent else name
        raise SettingsError(f"{where} must be a table")
    return value


def _str(table: Mapping[str, Any], name: str, default: str, where: str) -> str:
    value = table.get(name, default)
    if not isinstance(value, str):
        raise SettingsError(f"{where}.{name} must be a string, got {value!r}")
    return value


def _bool(table: Mapping[str, Any], name: str, default: bool, where: str) -> bool:
    value = table.get(name, default)
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    if not isinstance(value, bool):
        raise SettingsError(f"{where}.{name} must be true or false, got {value!r}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise SettingsError(f"{where} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{where} must be a number, got {value!r}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise SettingsError(f"{where} must be a finite number, got {value!r}")
    return number


def _float(table: Mapping[str, Any], name: str, default: float, where: str) -> float:
    if name not in table:
        return default
    value = _number(table[name], f"{where}.{name}")
    if value < 0:
        raise SettingsError(f"{where}.{name} must not be negative, got {value}")
    return value


def _int(table: Mapping[str, Any], name: str, default: int, where: str) -> int:
    if name not in table:
        return default
    value = table[name]
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise SettingsError(f"{where}.{name} must be an integer, got {value!r}") from None
    if not isinstance(value, int) or isinstance(value, bool):
        raise SettingsError(f"{where}.{name} must be an integer, got {value!r}")
    return value


def _urls(table: Mapping[str, Any], name: str, where: str) -> tuple[str, ...]:
    value = table.get(name, ())
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{where}.{name} must be a list of base URLs")
    return tuple(url.rstrip("/") for url in value)


def _list(table: Mapping[str, Any], name: str, where: str) -> tuple[str, ...]:
    value = table.get(name, ())
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{where}.{name} must be a list of strings")
    return tuple(value)


def _path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path
