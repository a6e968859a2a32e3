"""The core's exception tree; evaluation itself never raises (errors become reasons).

ValueError
 └── CoreError            anything the core rejects
      ├── DecodeError     flag/segment/data JSON that is not LaunchDarkly data (.path, .message)
      └── ContextError    context JSON or arguments that do not form a valid context
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
