"""The delivery node as the request handlers use it: `ServingNode`, a protocol that
`node.DeliveryNode` satisfies. The endpoints (`asgi`, `client_side`) depend on this and not on the
node, which builds them (`DeliveryNode.app`) and holds them (`DeliveryNode.client_side`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Protocol

from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.config import DeliveryConfig
from flagstaff_server.delivery.store import Environment, SnapshotStore


class ServingNode(Protocol):
    config: DeliveryConfig
    store: SnapshotStore
    admission: Admission
    counts: Counter[str]
    current: bool
    """Caught up with the feed at least once since start: an unknown key is truly unknown."""
    clock: Callable[[], float]
    wall: Callable[[], float]
    rng: Callable[[], float]
    metric_sources: list[Callable[[], list[str]]]
    """More `/metrics` lines from parts built on the node (client-side delivery)."""

    def serves(self, env: Environment) -> bool:
        """Whether the node may answer for `env` now (its data is complete)."""

    async def probe(self) -> bool:
        """Look for credentials the node does not know yet; whether the lookup succeeded."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def metrics_text(self) -> bytes:
        """The `/metrics` body."""
