"""LaunchDarkly's `limit`/`offset` paging of account-wide lists (members, teams): checked once,
then applied to the whole ordered list, whose length is the answer's `totalCount`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from flagstaff_server.errors import ValidationError

T = TypeVar("T")
MAX_LIMIT = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    limit: int = 20
    offset: int = 0

    def check(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValidationError(f"limit is 1 to {MAX_LIMIT}", path="/limit")
        if self.offset < 0:
            raise ValidationError("offset is 0 or more", path="/offset")

    def of(self, items: Sequence[T]) -> list[T]:
        return list(items[self.offset : self.offset + self.limit])


__all__ = ["Page"]
