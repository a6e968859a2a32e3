"""Which environment a credential opens, as delivery knows it: decoded from the feed's
"environment" changes (whose item format `environment_item` defines) or from environment records.

Pure: no I/O; the caller passes the current time (epoch seconds) for retired-key expiry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flagstaff_server.services.ports import EnvironmentRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class RetiredKey:
    value: str
    expires: float
    """Epoch seconds after which the key stops working."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Credentials:
    project: str
    environment: str
    sdk_key: str
    mobile_key: str = ""
    client_side_id: str = ""
    retired_sdk_keys: tuple[RetiredKey, ...] = ()
    retired_mobile_keys: tuple[RetiredKey, ...] = ()
    secure_mode: bool = False
    """Browser requests must carry the context's secure-mode hash (client delivery checks it)."""

    def sdk_keys(self, now: float) -> list[str]:
        """The SDK keys accepted at `now`: the current one and unexpired retired ones."""
        keys = [self.sdk_key] if self.sdk_key else []
        keys.extend(key.value for key in self.retired_sdk_keys if key.expires > now)
        return keys


def environment_item(record: EnvironmentRecord) -> dict[str, Any]:
    """The `item` of an "environment" feed change: what delivery needs to authenticate SDKs.
    Producers of environment changes call this so the format has one owner."""
    return {
        "project": record.project,
        "key": record.key,
        "sdkKey": record.sdk_key,
        "mobileKey": record.mobile_key,
        "clientSideId": record.client_side_id,
        "secureMode": record.secure_mode,
        "retired": [
            {"kind": retired.kind, "value": retired.value, "expires": retired.expires.timestamp()}
            for retired in record.retired
        ],
    }


def decode_credentials(project: str, environment: str, item: dict[str, Any]) -> Credentials:
    """Credentials from an environment item (`environment_item`'s format, or the disk copy).
    Raises ValueError naming the field when the item does not have that shape."""
    sdk_key = item.get("sdkKey")
    if not isinstance(sdk_key, str):
        raise ValueError("environment item: sdkKey must be a string")
    retired: dict[str, list[RetiredKey]] = {"sdk": [], "mobile": []}
    for index, entry in enumerate(item.get("retired") or ()):
        if not isinstance(entry, dict):
            raise ValueError(f"environment item: retired[{index}] must be an object")
        if entry.get("kind") not in retired:
            continue
        value, expires = entry.get("value"), entry.get("expires")
        if not isinstance(value, str) or not isinstance(expires, int | float):
            raise ValueError(f"environment item: retired[{index}] needs value and expires")
        retired[entry["kind"]].append(RetiredKey(value=value, expires=float(expires)))
    secure_mode = item.get("secureMode", False)
    if not isinstance(secure_mode, bool):
        raise ValueError("environment item: secureMode must be a boolean")
    return Credentials(
        project=project,
        environment=environment,
        sdk_key=sdk_key,
        mobile_key=_text(item, "mobileKey"),
        client_side_id=_text(item, "clientSideId"),
        retired_sdk_keys=tuple(retired["sdk"]),
        retired_mobile_keys=tuple(retired["mobile"]),
        secure_mode=secure_mode,
    )


def encode_credentials(credentials: Credentials) -> dict[str, Any]:
    """The disk form; `decode_credentials` reads it back."""
    return {
        "project": credentials.project,
        "key": credentials.environment,
        "sdkKey": credentials.sdk_key,
        "mobileKey": credentials.mobile_key,
        "clientSideId": credentials.client_side_id,
        "secureMode": credentials.secure_mode,
        "retired": [
            *(
                {"kind": "sdk", "value": key.value, "expires": key.expires}
                for key in credentials.retired_sdk_keys
            ),
            *(
                {"kind": "mobile", "value": key.value, "expires": key.expires}
                for key in credentials.retired_mobile_keys
            ),
        ],
    }


def credentials_of(records: Iterable[EnvironmentRecord]) -> list[Credentials]:
    return [
        decode_credentials(record.project, record.key, environment_item(record))
        for record in records
    ]


def _text(item: dict[str, Any], name: str) -> str:
    value = item.get(name, "")
    if not isinstance(value, str):
        raise ValueError(f"environment item: {name} must be a string")
    return value
