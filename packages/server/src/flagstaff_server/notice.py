"""Operator notices ("EU edits are read-only; use the kill switch for emergencies"): the value,
its public JSON (what the management API answers, the outbox carries and the status feed
serves) and the rules its fields follow, each failure a `ValidationError` at a JSON pointer.

Pure: no I/O and no clock (callers pass `now_ms`). Shared by the control plane, which stores
notices, and by delivery nodes and relays, which decode what reaches them from the outbox, an
upstream or a signed push, and never trust it further than this decoder does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from flagstaff_server.errors import ValidationError

Severity = Literal["info", "warning", "critical"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
SEVERITY_RANK: Mapping[str, int] = {"critical": 0, "warning": 1, "info": 2}
"""The page lists the gravest first."""

Source = Literal["api", "signed"]
"""Where a notice was posted: the management API (stored in the database, delivered through the
outbox) or a document signed with a break-glass key and pushed to nodes directly."""
SOURCES: tuple[Source, ...] = get_args(Source)

TITLE_MAX_LENGTH = 200
MESSAGE_MAX_LENGTH = 2000
REGIONS_MAX = 16
MAX_MILLIS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z: later timestamps are refused rather than overflowing a datetime."""
REGION_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
"""A region name, as `FLAGSTAFF_REGION` takes it (`settings.REGION_NAME`; this module stays
below the settings, which import delivery)."""
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A notice id: 24 hex digits from the API, a UUID from `killswitch sign-notice`."""
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters other than tab and line breaks: never shown on a page."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    id: str
    title: str
    message: str = ""
    severity: Severity = "info"
    regions: tuple[str, ...] = ()
    """The regions it concerns; empty: every region."""
    created_ms: int
    expires_ms: int | None = None
    """Epoch milliseconds after which it is no longer shown; None: until deleted."""
    source: Source = "api"

    def is_active(self, now_ms: int) -> bool:
        return self.expires_ms is None or self.expires_ms > now_ms


def check_title(value: Any, path: str = "/title") -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > TITLE_MAX_LENGTH:
        raise ValidationError(
            f"a title is a non-blank string of at most {TITLE_MAX_LENGTH} characters", path=path
        )
    return _printable(value.strip(), path)


def check_message(value: Any, path: str = "/message") -> str:
    if not isinstance(value, str) or len(value) > MESSAGE_MAX_LENGTH:
        raise ValidationError(
            f"a message is a string of at most {MESSAGE_MAX_LENGTH} characters", path=path
        )
    return _printable(value.strip(), path)


def check_severity(value: Any, path: str = "/severity") -> Severity:
    if value not in SEVERITIES:
        raise ValidationError(
            f"severity must be one of {', '.join(SEVERITIES)}, got {value!r}", path=path
        )
    severity: Severity = value
    return severity


def check_regions(value: Any, path: str = "/regions") -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or len(value) > REGIONS_MAX:
        raise ValidationError(
            f"regions must be an array of at most {REGIONS_MAX} region names", path=path
        )
    for index, name in enumerate(value):
        if not isinstance(name, str) or not REGION_PATTERN.fullmatch(name):
            raise ValidationError(
                "a region name is 1 to 63 lowercase letters, digits, '.', '-' or '_'",
                path=f"{path}/{index}",
            )
    return tuple(sorted(set(value)))


def check_millis(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MILLIS:
        raise ValidationError(
            "expected epoch milliseconds (an integer from 0 to 253402300799999)", path=path
        )
    return value


def check_expiry(value: Any, *, now_ms: int, path: str = "/expiresAt") -> int | None:
    """None, or a time after `now_ms` (a notice that has already expired is a mistake)."""
    if value is None:
        return None
    expires = check_millis(value, path)
    if expires <= now_ms:
        raise ValidationError("expiresAt must be in the future", path=path)
    return expires


def check_id(value: Any, path: str = "/_id") -> str:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise ValidationError("a notice id is 1 to 64 letters, digits, '.', '_' or '-'", path=path)
    return value


def _printable(text: str, path: str) -> str:
    if _CONTROL.search(text):
        raise ValidationError("control characters are not allowed", path=path)
    return text


def notice_json(notice: Notice) -> dict[str, Any]:
    """The public form (no author: the status feed that serves it needs no credential)."""
    return {
        "_id": notice.id,
        "title": notice.title,
        "message": notice.message,
        "severity": notice.severity,
        "regions": list(notice.regions),
        "creationDate": notice.created_ms,
        "expiresAt": notice.expires_ms,
        "_source": notice.source,
    }


def decode_notice(value: Any) -> Notice:
    """A notice from its public form, checked field by field (pointers relative to `value`)."""
    if not isinstance(value, Mapping):
        raise ValidationError("a notice is a JSON object", path="")
    source = value.get("_source", "api")
    if source not in SOURCES:
        raise ValidationError(f"_source must be one of {', '.join(SOURCES)}", path="/_source")
    expires = value.get("expiresAt")
    return Notice(
        id=check_id(value.get("_id")),
        title=check_title(value.get("title")),
        message=check_message(value.get("message", "")),
        severity=check_severity(value.get("severity", "info")),
        regions=check_regions(value.get("regions", [])),
        created_ms=check_millis(value.get("creationDate"), "/creationDate"),
        expires_ms=None if expires is None else check_millis(expires, "/expiresAt"),
        source=source,
    )


def ordered(notices: list[Notice]) -> list[Notice]:
    """Gravest first, then newest first."""
    return sorted(notices, key=lambda n: (SEVERITY_RANK[n.severity], -n.created_ms, n.id))
