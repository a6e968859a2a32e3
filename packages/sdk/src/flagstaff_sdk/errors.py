"""The SDK's exception tree; evaluation never raises (problems become reasons and defaults).

Exception
 └── SdkError              anything the SDK raises to its caller
      ├── ConfigError      a Config that cannot work (no endpoint, bad URI, bad timing)
      ├── DataFileError    a flag data file that cannot be loaded (.path names the file)
      └── SourceError      a data-source attempt failed (raised and caught inside the actor)
           ├── HttpStatusError   the service answered with an error status (.status, .retry_after)
           ├── FallbackToFdv1    the service asked for FDv1 (X-LD-FD-Fallback or 404 on FDv2)
           └── PayloadError      the service sent data that is not LaunchDarkly data
"""

from __future__ import annotations


class SdkError(Exception):
    """Base of every error the SDK raises."""


class ConfigError(SdkError, ValueError):
    """The configuration cannot work."""


class DataFileError(SdkError):
    """A flag data file could not be read or is not LaunchDarkly data; nothing was loaded."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class SourceError(SdkError):
    """One attempt of a data source failed; the actor backs off and tries again."""

    recoverable = True


class HttpStatusError(SourceError):
    """An error status. 401/403 (and other 4xx but 400/408/429) are not recoverable."""

    def __init__(self, status: int, *, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after
        self.recoverable = status >= 500 or status in (400, 408, 429)


class FallbackToFdv1(SourceError):
    """The service does not speak FDv2 here; this endpoint is used with FDv1 from now on."""


class PayloadError(SourceError):
    """Malformed JSON, or JSON that is not LaunchDarkly flag data."""
