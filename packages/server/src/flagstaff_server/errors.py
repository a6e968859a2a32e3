"""The server's exception tree. Services and domain code raise these; one table in
`flagstaff_server.http.problem` maps them to HTTP status codes and problem-JSON bodies.

    FlagstaffError
    ├── NotFound                  404  a project, environment, flag, segment, token ... is missing
    ├── Conflict                  409
    │   ├── AlreadyExists               a key is taken
    │   └── VersionConflict             an optimistic-concurrency check failed
    │       └── LostRace                    another writer committed between read and write
    │   └── SequenceConflict            a code-references upload older than the stored one
    ├── InvalidInput              400  malformed request
    │   ├── MalformedJson               the body is not JSON at all
    │   ├── ValidationError             invalid data at a JSON pointer `path`
    │   ├── ContentTooLarge       413  more (bytes, or work to evaluate) than a request may carry
    │   └── UriTooLong            414  a context in the path longer than a request may carry
    ├── Unauthorized              401  no valid credential
    │   └── IdentityProviderError       single sign-on refused: the provider's answer failed a check
    ├── Forbidden                 403  valid credential, insufficient role or scope
    ├── ApprovalRequired          405  a direct change where the environment requires approval
    ├── TooManyAttempts           429  too many failed sign-ins; `retry_after` seconds to wait
    ├── UnsupportedMediaType      415
    ├── StoreUnavailable          503  the database (or feed) cannot be reached
    └── RegionReadOnly            503  the database is a hot standby: writes wait for promotion
"""

from __future__ import annotations


class FlagstaffError(Exception):
    """Base of every error the server raises on purpose."""

    code: str = "internal_error"

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class NotFound(FlagstaffError):
    code = "not_found"


class Conflict(FlagstaffError):
    code = "conflict"


class AlreadyExists(Conflict):
    code = "conflict"


class VersionConflict(Conflict):
    code = "optimistic_locking_error"


class LostRace(VersionConflict):
    """The store's compare-and-set failed although the caller asked for no particular version:
    use cases retry these (re-reading and re-applying), so only exhausted retries answer 409."""


class SequenceConflict(Conflict):
    """A branch of code references PUT with an `updateSequenceId` not above the stored one:
    LaunchDarkly's code, which `ld-find-code-refs` reads."""

    code = "updateSequenceId_conflict"


class InvalidInput(FlagstaffError):
    code = "invalid_request"


class MalformedJson(InvalidInput):
    """A body declared JSON that does not parse; the same `invalid_json` code FastAPI's own body
    parsing answers on the other routes."""

    code = "invalid_json"


class ValidationError(InvalidInput):
    """Invalid data; `path` is the JSON pointer of the offending value."""

    code = "invalid_request"


class ContentTooLarge(InvalidInput):
    """The request carries more than the server takes: a body over its byte limit, or a context
    that would take more work to evaluate than one request may (413)."""

    code = "payload_too_large"


class UriTooLong(InvalidInput):
    """The request path carries more than the server takes (a context in the URL, 414)."""

    code = "uri_too_long"


class Unauthorized(FlagstaffError):
    code = "unauthorized"


class IdentityProviderError(Unauthorized):
    """An OpenID provider could not be reached or discovered, or its ID token was refused (bad
    signature, wrong issuer or audience, expired, nonce mismatch). The message says which."""

    code = "sso_refused"


class Forbidden(FlagstaffError):
    """`action` and `resource`, when a policy refused: the first pair it did not allow."""

    code = "forbidden"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        action: str | None = None,
        resource: str | None = None,
    ) -> None:
        super().__init__(message, path=path)
        self.action = action
        self.resource = resource


class ApprovalRequired(FlagstaffError):
    """The change would alter what an environment requiring approval serves, and the caller may
    not bypass approvals: it must go through an approval request (LaunchDarkly answers 405)."""

    code = "approval_required"


class TooManyAttempts(FlagstaffError):
    """Refused without checking the credential: too many recent failures for the account or
    the client address. `retry_after` is the whole seconds until one more attempt is allowed."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnsupportedMediaType(FlagstaffError):
    code = "unsupported_media_type"


class StoreUnavailable(FlagstaffError):
    code = "service_unavailable"


class RegionReadOnly(FlagstaffError):
    """A write reached a database that is a hot standby (PostgreSQL refused it as read-only).
    It says which region this is and, when known, where the primary is; writes work again the
    moment the standby is promoted, since the refusal is the database's own."""

    code = "region_read_only"
    retry_after = 30
    """Seconds a client should wait: a promotion is an operator's decision, not a blip."""

    def __init__(
        self, *, region: str, primary_region: str | None = None, upstream: str | None = None
    ) -> None:
        where = f"the primary region ({primary_region})" if primary_region else "the primary"
        source = f", replicating from {upstream}" if upstream else ""
        super().__init__(
            f"region {region} is read-only: its database is a standby{source}; writes go to "
            f"{where} or wait for this region's promotion (flagstaff dr promote)"
        )
        self.region = region
        self.primary_region = primary_region
        self.upstream = upstream
