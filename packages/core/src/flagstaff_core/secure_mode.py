"""The secure-mode hash a browser sends to prove its context was signed by the server."""

from __future__ import annotations

import hashlib
import hmac

from flagstaff_core.context import Context


def secure_mode_hash(sdk_key: str, context: Context) -> str:
    """Lowercase hex HMAC-SHA256 of the context's fully-qualified key, keyed by the SDK key."""
    return hmac.new(
        sdk_key.encode(), context.fully_qualified_key.encode(), hashlib.sha256
    ).hexdigest()
