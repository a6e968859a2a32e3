"""Break-glass documents: a signed flag override (`flagOverride`) or the signed clear of one
(`flagOverrideClear`), decoded strictly (every problem names its field as a JSON pointer), and
the canonical bytes a signature covers.

Pure: no I/O, no clock, no cryptography (`signing` signs and verifies these bytes).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from flagstaff_server.errors import MalformedJson, ValidationError

Kind = Literal["flagOverride", "flagOverrideClear"]
OVERRIDE: Kind = "flagOverride"
CLEAR: Kind = "flagOverrideClear"

ENDPOINT = "/break-glass/overrides"
"""Where delivery nodes and relays take documents: POST an override, DELETE a clear, GET lists."""
MAX_DOCUMENT_BYTES = 16 * 1024
"""A document is a few hundred bytes; anything much larger is refused before parsing."""
MAX_MILLIS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z: timestamps beyond are refused rather than overflowing a datetime."""
MAX_VARIATION = 10_000
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,255}$")
_KEY_ID = re.compile(r"^[0-9a-f]{16}$")

_COMMON = ("kind", "id", "keyId", "project", "environment", "flag", "issuedAt", "signature")
FIELDS: Mapping[Kind, frozenset[str]] = {
    OVERRIDE: frozenset((*_COMMON, "action", "expiresAt")),
    CLEAR: frozenset(_COMMON),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """What an override serves: the flag switched off, switched on (its own targeting), or one
    variation to everyone (`variation`, with `on` true)."""

    on: bool
    variation: int | None = None

    def to_json(self) -> dict[str, Any]:
        if self.variation is not None:
            return {"variation": self.variation}
        return {"on": True} if self.on else {"off": True}

    def describe(self) -> str:
        if self.variation is not None:
            return f"serve variation {self.variation}"
        return "on" if self.on else "off"


OFF = Action(on=False)
ON = Action(on=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    kind: Kind
    id: str
    key_id: str
    project: str
    environment: str
    flag: str
    action: Action | None
    """None for a clear."""
    issued_at: int
    """Epoch milliseconds; of two documents for one flag only a later one is accepted."""
    expires_at: int | None
    """Epoch milliseconds after which an override stops applying; None: until cleared."""
    signature: str
    raw: Mapping[str, Any]
    """The document as received (what is kept on disk, forwarded to peers and audited)."""

    @property
    def flag_id(self) -> tuple[str, str, str]:
        return (self.project, self.environment, self.flag)

    @property
    def resource(self) -> str:
        """The LaunchDarkly resource spec of the flag in its environment."""
        return f"proj/{self.project}:env/{self.environment}:flag/{self.flag}"

    def signed_bytes(self) -> bytes:
        return canonical_bytes(self.raw)

    def is_expired(self, now_ms: int) -> bool:
        return self.expires_at is not None and self.expires_at <= now_ms


def canonical_bytes(document: Mapping[str, Any]) -> bytes:
    """What a signature covers: every member but `signature`, keys sorted, no whitespace, UTF-8.
    For the values a valid document holds (short ASCII strings, integers, `true`) this is the
    RFC 8785 canonical form, so any JCS library reproduces it."""
    unsigned = {name: value for name, value in document.items() if name != "signature"}
    return orjson.dumps(unsigned, option=orjson.OPT_SORT_KEYS)


def unsigned_document(
    *,
    kind: Kind,
    key_id: str,
    project: str,
    environment: str,
    flag: str,
    issued_at: int,
    action: Action | None = None,
    expires_at: int | None = None,
    document_id: str | None = None,
) -> dict[str, Any]:
    """A document to sign (what `flagstaff killswitch sign` builds)."""
    document: dict[str, Any] = {
        "kind": kind,
        "id": document_id or str(uuid.uuid4()),
        "keyId": key_id,
        "project": project,
        "environment": environment,
        "flag": flag,
        "issuedAt": issued_at,
    }
    if kind == OVERRIDE:
        assert action is not None
        document["action"] = action.to_json()
        document["expiresAt"] = expires_at
    return document


def parse_document(body: bytes) -> Document:
    """Decode a request body; raises MalformedJson or ValidationError naming the field."""
    if len(body) > MAX_DOCUMENT_BYTES:
        raise ValidationError(
            f"a break-glass document is at most {MAX_DOCUMENT_BYTES} bytes", path=""
        )
    try:
        raw = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MalformedJson(f"malformed JSON body: {exc}", path="") from exc
    return decode_document(raw)


def decode_document(raw: Any) -> Document:
    if not isinstance(raw, dict):
        raise ValidationError("a break-glass document must be a JSON object", path="")
    given = raw.get("kind")
    if given not in FIELDS:
        raise ValidationError(
            f"kind must be {OVERRIDE!r} or {CLEAR!r}, got {_shown(given)}", path="/kind"
        )
    kind: Kind = OVERRIDE if given == OVERRIDE else CLEAR
    allowed = FIELDS[kind]
    for name in sorted(raw):
        if name not in allowed:
            raise ValidationError(f"unknown member {name!r} in a {kind} document", path=f"/{name}")
    for name in sorted(allowed - {"expiresAt"}):
        if name not in raw:
            raise ValidationError(f"{name} is required", path=f"/{name}")
    document_id = _text(raw, "id")
    try:
        parsed_id = uuid.UUID(document_id)
    except ValueError:
        parsed_id = None
    if parsed_id is None or str(parsed_id) != document_id:
        raise ValidationError("id must be a UUID in its canonical lower-case form", path="/id")
    key_id = _text(raw, "keyId")
    if not _KEY_ID.match(key_id):
        raise ValidationError("keyId must be 16 lower-case hex digits", path="/keyId")
    project, environment, flag = (_key(raw, name) for name in ("project", "environment", "flag"))
    issued_at = _millis(raw, "issuedAt")
    action: Action | None = None
    expires_at: int | None = None
    if kind == OVERRIDE:
        action = _action(raw.get("action"))
        if raw.get("expiresAt") is not None:
            expires_at = _millis(raw, "expiresAt")
            if expires_at <= issued_at:
                raise ValidationError("expiresAt must be after issuedAt", path="/expiresAt")
    signature = _text(raw, "signature")
    return Document(
        kind=kind,
        id=document_id,
        key_id=key_id,
        project=project,
        environment=environment,
        flag=flag,
        action=action,
        issued_at=issued_at,
        expires_at=expires_at,
        signature=signature,
        raw=raw,
    )


def _action(value: Any) -> Action:
    if not isinstance(value, dict) or len(value) != 1:
        raise ValidationError(
            'action must be exactly one of {"off": true}, {"on": true}, {"variation": N}',
            path="/action",
        )
    (name, given), *_ = value.items()
    if name in ("off", "on"):
        if given is not True:
            raise ValidationError(f"action.{name} must be true", path=f"/action/{name}")
        return OFF if name == "off" else ON
    if name == "variation":
        if not isinstance(given, int) or isinstance(given, bool) or not 0 <= given <= MAX_VARIATION:
            raise ValidationError(
                f"action.variation must be a variation index (0-{MAX_VARIATION})",
                path="/action/variation",
            )
        return Action(on=True, variation=given)
    raise ValidationError(f"unknown action {name!r}", path=f"/action/{name}")


def _text(raw: Mapping[str, Any], name: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{name} must be a non-empty string", path=f"/{name}")
    return value


def _key(raw: Mapping[str, Any], name: str) -> str:
    value = _text(raw, name)
    if not _KEY.match(value):
        raise ValidationError(
            f"{name} must be a key (letters, digits, '.', '_', '-'; at most 256)", path=f"/{name}"
        )
    return value


def _millis(raw: Mapping[str, Any], name: str) -> int:
    value = raw.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_MILLIS:
        raise ValidationError(f"{name} must be epoch milliseconds (an integer)", path=f"/{name}")
    return value


def _shown(value: Any) -> str:
    text = orjson.dumps(value).decode() if value is not None else "nothing"
    return text if len(text) <= 40 else text[:37] + "..."
