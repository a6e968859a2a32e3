"""The core's exception tree; evaluation itself never raises (errors become reasons).

ValueError
 └── CoreError            anything the core rejects
      ├── DecodeError     flag/segment/data JSON that is not LaunchDarkly data (.path, .message)
      ├── ContextError    context JSON or arguments that do not form a valid context
      └── Stopped         the caller's `keep_going` said stop (evaluate_for_client)
"""

from __future__ import annotations


class CoreError(ValueError):
    """Base of every error the evaluation core raises."""


class DecodeError(CoreError):
    """Flag or segment data is malformed; `path` is the JSON path of the offending value."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class ContextError(CoreError):
    """An evaluation context is invalid (bad kind, missing key, wrong attribute type, ...)."""


class Stopped(CoreError):
    """A caller-bounded evaluation was stopped between flags because `keep_going` said so; no
    result is returned for any flag."""
