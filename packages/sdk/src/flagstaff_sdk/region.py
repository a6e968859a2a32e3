"""The endpoints (regions) a client may use, preferred first: which one to use now, failover
after repeated failures, and which better ones to probe so the client returns to them.

Plain bookkeeping, each set owned by one thread (the data system's loop for flag data, the event
courier for events: each keeps its own health, since a region's delivery and ingest nodes fail
apart); must not do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from flagstaff_sdk.config import Endpoint


@dataclass(slots=True)
class Region:
    endpoint: Endpoint
    index: int
    fdv1: bool
    """This endpoint is spoken to with FDv1 (configured, or it asked for the fallback)."""
    failures: int = 0
    """Consecutive failed attempts (streams that never became healthy, failed polls)."""
    tried: bool = False
    poll_etag: str | None = None

    @property
    def name(self) -> str:
        return self.endpoint.name


class RegionSet:
    def __init__(self, endpoints: tuple[Endpoint, ...], *, fdv1: bool, threshold: int) -> None:
        self.regions = [Region(endpoint, i, fdv1) for i, endpoint in enumerate(endpoints)]
        self.threshold = threshold
        self._rotation = 0

    def is_healthy(self, region: Region) -> bool:
        return region.failures < self.threshold

    def first_healthy(self) -> Region | None:
        for region in self.regions:
            if self.is_healthy(region):
                return region
        return None

    def pick(self) -> Region:
        """The first healthy region; when none is healthy, each in turn."""
        healthy = self.first_healthy()
        if healthy is not None:
            return healthy
        region = self.regions[self._rotation % len(self.regions)]
        self._rotation += 1
        return region

    def in_poll_order(self) -> list[Region]:
        """Healthy regions in preference order, then the unhealthy ones."""
        healthy = [r for r in self.regions if self.is_healthy(r)]
        return healthy + [r for r in self.regions if not self.is_healthy(r)]

    def better_than(self, region: Region) -> list[Region]:
        """Preferred regions ahead of `region` (the ones to probe)."""
        return self.regions[: region.index]

    def failed(self, region: Region) -> None:
        region.failures += 1
        region.tried = True

    def succeeded(self, region: Region) -> None:
        region.failures = 0
        region.tried = True

    @property
    def all_tried_and_failing(self) -> bool:
        return all(r.tried and r.failures > 0 for r in self.regions)
