"""The processor process (`python -m flagstaff_server.ingest.processor_child`, started by
`processor_process`): the same `Processor` as in the node's own process, reading the journal's
directory up to the durable seq the node publishes in the shared slots, and publishing its
committed position there; the node releases the segments. Its configuration comes as one JSON
object on stdin (the analytics URL may hold a password: never on the command line). It runs at a
lower CPU priority than the node, exits when asked through the slots, when the node is gone, or
with an error the node restarts it after."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.journal_segment import SUFFIX, Segment, segments_after
from flagstaff_server.ingest.processor import Processor
from flagstaff_server.ingest.processor_slots import COUNTED, Slot, Slots
from flagstaff_server.tasks import cancel_and_wait

PUBLISH_SECONDS = 0.02
"""How often the position and counts are copied into the slots (and the stop request read)."""

log = logging.getLogger(__name__)


class JournalView:
    """The journal as this process sees it: its directory's segment files, oldest first, and
    the node's durable seq. Releasing is the node's: a position is published instead."""

    def __init__(self, directory: Path, slots: Slots) -> None:
        self.directory = directory
        self.slots = slots

    @property
    def durable_seq(self) -> int:
        return self.slots[Slot.DURABLE]

    def current_segments(self) -> list[Segment]:
        segments = []
        for path in self.directory.glob(f"*{SUFFIX}"):
            stem = path.name[: -len(SUFFIX)]
            if stem.isdigit():
                segments.append(Segment(first_seq=int(stem), path=path, size=0))
        return sorted(segments, key=lambda segment: segment.first_seq)

    def segments_after(self, seq: int) -> list[Segment]:
        return segments_after(self.current_segments(), seq)

    def release(self, through_seq: int) -> int:
        return 0


def publish(processor: Processor, slots: Slots) -> None:
    for slot, name in COUNTED.items():
        slots[slot] = processor.counts[name]
    held = processor.quarantine_held
    slots[Slot.QUARANTINE_HELD] = -1 if held is None else held
    # -1 (not known) until the first pass has read the store or failed
    slots[Slot.STORE_OK] = 1 if processor.store_ok else (0 if processor.counts["error"] else -1)
    slots[Slot.POSITION] = processor.position


async def serve(config: dict[str, Any]) -> int:
    slots = Slots(Path(config["slots"]))
    store = AnalyticsStore(config["analytics_url"])
    processor = Processor(
        JournalView(Path(config["journal"]), slots),
        store,
        node_id=config["node_id"],
        **config.get("processor", {}),
    )
    parent = os.getppid()
    task = asyncio.create_task(processor.run(), name="ingest-processor")
    try:
        while slots[Slot.STOP] == 0 and os.getppid() == parent and not task.done():
            publish(processor, slots)
            await asyncio.sleep(PUBLISH_SECONDS)
    finally:
        await cancel_and_wait([task])
        publish(processor, slots)
        store.close()
        slots.close()
    return 0


def main() -> int:
    config: dict[str, Any] = json.loads(sys.stdin.read())
    logging.basicConfig(
        level=config.get("log_level", "WARNING"),
        format="%(asctime)s %(levelname)s %(name)s [processor] %(message)s",
    )
    with contextlib.suppress(OSError):
        os.nice(int(config.get("nice", 0)))
    return asyncio.run(serve(config))


if __name__ == "__main__":
    sys.exit(main())
