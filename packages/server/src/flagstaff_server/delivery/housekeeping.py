"""Stream housekeeping on a delivery node: heartbeats for idle streams, clean closes for streams
past their age (FDv2 ones with a goodbye), and closing every stream at once for a rebalance.
Runs on the event loop; writes only to the streams' channels.
"""

from __future__ import annotations

from flagstaff_server.delivery import sse
from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.store import SnapshotStore

V2_HEARTBEAT = sse.frame(b"heart-beat", b"{}")


def sweep(
    store: SnapshotStore, admission: Admission, *, heartbeat_seconds: float, now: float
) -> None:
    """Heartbeats for idle streams, clean closes for streams past their age."""
    idle_before = now - heartbeat_seconds
    for env in store.environments.values():
        for channel in env.broadcaster.channels:
            if channel.closing is not None:
                continue
            if now >= channel.deadline:
                admission.counts["aged_out"] += 1
                channel.close(
                    "max age", sse.goodbye("max-age") if channel.protocol == "v2" else b""
                )
            elif channel.last_sent <= idle_before and not channel.pending:
                channel.offer(sse.HEARTBEAT if channel.protocol == "v1" else V2_HEARTBEAT)


def drop_streams(store: SnapshotStore, reason: str) -> int:
    """Close every open stream cleanly (FDv2 streams get a goodbye); how many were closed."""
    closed = 0
    for env in store.environments.values():
        closed += len(env.broadcaster.channels)
        env.broadcaster.close_all(reason, sse.goodbye(reason))
    return closed
