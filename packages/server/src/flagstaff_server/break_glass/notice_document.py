"""Signed operator notices: a notice for the status page (`statusNotice`) or the clear of one
(`statusNoticeClear`), signed offline with a break-glass key like an override, for when the
management API cannot take one. Decoded strictly (every problem names its field as a JSON
pointer); the signature covers the same canonical bytes as an override's (`document`).

Pure: no I/O, no clock, no cryptography (`signing` verifies these bytes).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from flagstaff_server.break_glass.document import MAX_DOCUMENT_BYTES, canonical_bytes
from flagstaff_server.errors import MalformedJson, ValidationError
from flagstaff_server.notice import (
    Notice,
    Severity,
    check_message,
    check_millis,
    check_regions,
    check_severity,
    check_title,
)

NoticeKind = Literal["statusNotice", "statusNoticeClear"]
NOTICE: NoticeKind = "statusNotice"
NOTICE_CLEAR: NoticeKind = "statusNoticeClear"
KINDS: tuple[NoticeKind, ...] = (NOTICE, NOTICE_CLEAR)

ENDPOINT = "/break-glass/notices"
"""Where delivery nodes and relays take them: POST a notice, DELETE a clear, GET lists."""

_COMMON = ("kind", "id", "keyId", "issuedAt", "signature")
FIELDS: Mapping[NoticeKind, frozenset[str]] = {
    NOTICE: frozenset((*_COMMON, "title", "message", "severity", "regions", "expiresAt")),
    NOTICE_CLEAR: frozenset((*_COMMON, "notice")),
}
REQUIRED: Mapping[NoticeKind, frozenset[str]] = {
    NOTICE: frozenset((*_COMMON, "title")),
    NOTICE_CLEAR: frozenset((*_COMMON, "notice")),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class NoticeDocument:
    kind: NoticeKind
    id: str
    """The document's id; a notice is shown under it, a clear names the notice in `notice`."""
    key_id: str
    issued_at: int
    signature: str
    raw: Mapping[str, Any]
    """The document as received (kept on disk, forwarded to peers and audited)."""
    notice: Notice | None = None
    """What a `statusNotice` shows; None for a clear."""
    clears: str | None = None
    """The id of the notice a `statusNoticeClear` ends."""

    def signed_bytes(self) -> bytes:
        return canonical_bytes(self.raw)

    @property
    def resource(self) -> str:
        """The audit log's resource for it: the notice it shows or clears."""
        return f"notice/{self.clears or self.id}"


def unsigned_notice(
    *,
    key_id: str,
    title: str,
    issued_at: int,
    message: str = "",
    severity: Severity = "info",
    regions: tuple[str, ...] = (),
    expires_at: int | None = None,
    document_id: str | None = None,
) -> dict[str, Any]:
    """A notice to sign (what `flagstaff killswitch sign-notice` builds)."""
    return {
        "kind": NOTICE,
        "id": document_id or str(uuid.uuid4()),
        "keyId": key_id,
        "title": title,
        "message": message,
        "severity": severity,
        "regions": list(regions),
        "issuedAt": issued_at,
        "expiresAt": expires_at,
    }


def unsigned_notice_clear(*, key_id: str, notice_id: str, issued_at: int) -> dict[str, Any]:
    return {
        "kind": NOTICE_CLEAR,
        "id": str(uuid.uuid4()),
        "keyId": key_id,
        "notice": notice_id,
        "issuedAt": issued_at,
    }


def parse_notice_document(body: bytes) -> NoticeDocument:
    """Decode a request body; raises MalformedJson or ValidationError naming the field."""
    if len(body) > MAX_DOCUMENT_BYTES:
        raise ValidationError(
            f"a break-glass document is at most {MAX_DOCUMENT_BYTES} bytes", path=""
        )
    try:
        raw = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MalformedJson(f"malformed JSON body: {exc}", path="") from exc
    return decode_notice_document(raw)


def decode_notice_document(raw: Any) -> NoticeDocument:
    if not isinstance(raw, dict):
        raise ValidationError("a break-glass document must be a JSON object", path="")
    given = raw.get("kind")
    if given not in KINDS:
        raise ValidationError(
            f"kind must be {NOTICE!r} or {NOTICE_CLEAR!r} here, got {given!r}"[:200],
            path="/kind",
        )
    kind: NoticeKind = NOTICE if given == NOTICE else NOTICE_CLEAR
    for name in sorted(raw):
        if name not in FIELDS[kind]:
            raise ValidationError(f"unknown member {name!r} in a {kind} document", path=f"/{name}")
    for name in sorted(REQUIRED[kind]):
        if name not in raw:
            raise ValidationError(f"{name} is required", path=f"/{name}")
    document_id = _uuid(raw.get("id"), "/id")
    key_id = raw.get("keyId")
    if not isinstance(key_id, str) or len(key_id) != 16 or not _is_hex(key_id):
        raise ValidationError("keyId must be 16 lower-case hex digits", path="/keyId")
    issued_at = check_millis(raw.get("issuedAt"), "/issuedAt")
    signature = raw.get("signature")
    if not isinstance(signature, str) or not signature:
        raise ValidationError("signature must be a non-empty string", path="/signature")
    if kind == NOTICE_CLEAR:
        return NoticeDocument(
            kind=kind,
            id=document_id,
            key_id=key_id,
            issued_at=issued_at,
            signature=signature,
            raw=raw,
            clears=_uuid(raw.get("notice"), "/notice"),
        )
    expires = raw.get("expiresAt")
    expires_at = None if expires is None else check_millis(expires, "/expiresAt")
    if expires_at is not None and expires_at <= issued_at:
        raise ValidationError("expiresAt must be after issuedAt", path="/expiresAt")
    notice = Notice(
        id=document_id,
        title=check_title(raw.get("title")),
        message=check_message(raw.get("message", "")),
        severity=check_severity(raw.get("severity", "info")),
        regions=check_regions(raw.get("regions", [])),
        created_ms=issued_at,
        expires_ms=expires_at,
        source="signed",
    )
    return NoticeDocument(
        kind=kind,
        id=document_id,
        key_id=key_id,
        issued_at=issued_at,
        signature=signature,
        raw=raw,
        notice=notice,
    )


def _uuid(value: Any, path: str) -> str:
    try:
        parsed = uuid.UUID(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or str(parsed) != value:
        raise ValidationError("expected a UUID in its canonical lower-case form", path=path)
    return str(parsed)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)
