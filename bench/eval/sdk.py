"""Flagstaff's Python SDK as benchmark runners: the public `Client.variation`, with events off and
with the real event processor posting to the loopback sink in `bench.eval.sink`. Both clients load
the bench data from a data file, so no data source touches the network.
"""

from __future__ import annotations

import json
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from flagstaff_core import decode_context
from flagstaff_sdk import Client, Config
from flagstaff_sdk.events import EventOptions, sink_factory

from bench.eval.case import Case, Json
from bench.eval.runner import Answer, Prepared

DEFAULT = "<default>"
SETTLE_TIMEOUT = 30.0


class SdkRunner:
    """`Client.variation(key, context, default)`. With events on, each timed repeat ends with
    `settle`: a wait until the processor's actor has summarised every evaluation recorded, so the
    actor's share of the work is counted too. Flushes happen on the processor's own timer."""

    side = "flagstaff"

    def __init__(self, data: Json, *, events_uri: str | None) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="flagstaff-bench-sdk-")
        path = Path(self._directory.name) / "data.json"
        path.write_text(json.dumps(data))
        self._events = sink_factory(EventOptions()) if events_uri is not None else None
        config = Config(
            "bench-sdk-key",
            base_uri=events_uri or "http://127.0.0.1:9",
            data_files=(path,),
            send_events=events_uri is not None,
            event_sink=self._events,
        )
        self.client = Client(config)
        if not self.client.is_initialized():
            raise RuntimeError("flagstaff_sdk did not load the bench data file")
        self.group = "events off" if events_uri is None else "events on"
        self.label = f"flagstaff SDK variation, {self.group}"

    def prepare(self, case: Case) -> Prepared:
        contexts = tuple(decode_context(json) for json in case.contexts)
        return Prepared(
            call=partial(self.client.variation, case.flag_key, default=DEFAULT),
            contexts=contexts,
            answer=_answer_from_detail,
            detail=partial(self.client.variation_detail, case.flag_key, default=DEFAULT),
            settle=None if self._events is None else self._settle,
        )

    def _settle(self) -> None:
        processor = None if self._events is None else self._events.processor
        if processor is not None and not processor.sync(SETTLE_TIMEOUT, flush=False):
            raise RuntimeError("the event processor did not settle in time")

    def remarks(self) -> list[str]:
        """Events dropped while timed (they would flatter the numbers)."""
        stats = self.client.event_stats()
        if stats is None or not stats.dropped_total:
            return []
        dropped = {reason.value: n for reason, n in stats.dropped.items() if n}
        return [f"{self.label}: events dropped {dropped}"]

    def close(self) -> None:
        self.client.close()
        self._directory.cleanup()


def _answer_from_detail(detail: Any) -> Answer:
    value = None if detail.variation_index is None else detail.value
    return Answer(
        value=value, variation_index=detail.variation_index, reason=detail.reason.to_json()
    )
