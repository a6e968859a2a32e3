"""A client-side SDK's evaluation context as it arrives (base64url in the path, or a JSON body),
its fingerprint (the cache and ETag key for "the same context"), and the secure-mode check.

Pure: no I/O. Bad input raises `InvalidInput` naming what was wrong; callers answer 400 (413 or
414 for a context over the size limit).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

import orjson
from flagstaff_core import Context, ContextError, decode_context, secure_mode_hash

from flagstaff_server.context_limits import check_context, check_path_segment
from flagstaff_server.errors import InvalidInput

SECURE_MODE_MESSAGE = "Environment is in secure mode, and context hash does not match."
"""LaunchDarkly's wording (Relay answers the same), so SDK logs read as they do elsewhere."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientContext:
    context: Context
    fingerprint: bytes
    """Digest of the context JSON with sorted keys: equal contexts share evaluations and ETags."""


def decode_base64_json(segment: str) -> Any:
    """The JSON in a base64url path segment, padded or not (SDKs strip the padding); 414 when
    it would be larger than a context may be."""
    text = segment.strip()
    check_path_segment(text)
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInput(
            "the context in the path is not valid base64url", path="context"
        ) from exc
    return parse_json(raw, "context")


def parse_json(raw: bytes, field: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"the {field} is not valid JSON: {exc}", path=field) from exc


def read_context(obj: Any) -> ClientContext:
    """A context from parsed JSON (new format or an old-style user), within the context limits
    (400 naming the place, as a JSON pointer into the context, of the first part over one)."""
    if not isinstance(obj, dict):
        raise InvalidInput("the context must be a JSON object", path="context")
    check_context(obj)
    try:
        context = decode_context(obj)
    except ContextError as exc:
        raise InvalidInput(f"invalid context: {exc}", path="context") from exc
    return ClientContext(context=context, fingerprint=fingerprint_of(obj))


def fingerprint_of(obj: Any) -> bytes:
    canonical = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(canonical, digest_size=16).digest()


def check_secure_mode(sdk_key: str, context: Context, given: str | None) -> None:
    """Raise `InvalidInput` (400, as LaunchDarkly answers) unless `given` is the context's hash."""
    expected = secure_mode_hash(sdk_key, context)
    if given is None or not hmac.compare_digest(expected.encode(), given.strip().lower().encode()):
        raise InvalidInput(SECURE_MODE_MESSAGE, path="h")
