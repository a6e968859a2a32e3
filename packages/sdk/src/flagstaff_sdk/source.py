"""The seam between data sources and the client: a source runs in the SDK's actor loop and hands
ChangeSets and health reports to a DataSink. Protocols only.
"""

from __future__ import annotations

from typing import Protocol

from flagstaff_sdk.change_set import ChangeSet


class DataSink(Protocol):
    """Where a data source delivers. Thread-safe: a source may call it from any thread."""

    def apply(self, change: ChangeSet) -> None:
        """Merge `change` into the client's data (stale data is dropped by the merge rule)."""

    def report_valid(self) -> None:
        """The source works and the data it delivered is current."""

    def report_error(self, kind: str, message: str, *, status: int | None = None) -> None:
        """The source failed; the client keeps evaluating with what it holds."""


class DataSource(Protocol):
    """A replacement for the network sources (files, test data, a user's own source)."""

    @property
    def name(self) -> str: ...

    async def run(self, sink: DataSink) -> None:
        """Deliver data until cancelled (when the client closes)."""
