"""The one exception a command raises to end with a clear message and a non-zero exit code."""

from __future__ import annotations


class CommandError(Exception):
    """A user-facing failure of a CLI command (bad file, bad argument, unreachable server)."""

    def __init__(self, message: str, *, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
