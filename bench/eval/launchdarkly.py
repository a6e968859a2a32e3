"""The official `launchdarkly-server-sdk` as benchmark runners: its public `variation_detail`, its
internal `Evaluator.evaluate` (reached through the client's private attributes, so the two share
one store), and its public `variation` with events off and on. Clients read a file data source;
with events on they post to the loopback sink in `bench.eval.sink`.
"""

from __future__ import annotations

import json
import logging
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from ldclient.integrations import Files
from ldclient.versioned_data_kind import FEATURES

from bench.eval.case import Case, Json
from bench.eval.runner import Answer, Prepared

# A sentinel default: a case whose answer is the default would show up as this value.
DEFAULT = "<default>"


class LaunchDarklyClient:
    """One `LDClient` over a temporary data file; the runners below evaluate through it. With
    `events_uri` it sends analytics events there (default flush interval and capacities)."""

    def __init__(self, data: Json, *, events_uri: str | None = None) -> None:
        logging.getLogger("ldclient").setLevel(logging.WARNING)
        self._directory = tempfile.TemporaryDirectory(prefix="flagstaff-bench-")
        path = Path(self._directory.name) / "data.json"
        path.write_text(json.dumps(data))
        events: dict[str, Any] = (
            {"send_events": False}
            if events_uri is None
            else {"send_events": True, "events_uri": events_uri}
        )
        config = Config(
            "bench-sdk-key",
            update_processor_class=Files.new_data_source(paths=[str(path)]),
            **events,
        )
        self.client = LDClient(config=config, start_wait=5)
        if not self.client.is_initialized():
            raise RuntimeError("launchdarkly-server-sdk did not load the bench data file")

    def close(self) -> None:
        self.client.close()  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated
        self._directory.cleanup()


def build_contexts(case: Case) -> tuple[object, ...]:
    contexts = tuple(Context.from_dict(json) for json in case.contexts)
    for context in contexts:
        if not context.valid:
            raise ValueError(f"invalid context in {case.name}: {context.error}")
    return contexts


class PublicRunner:
    """`LDClient.variation_detail(key, context, default)`: what an application calls."""

    label = "LD variation_detail (public)"
    side = "peer"
    group = "evaluator"

    def __init__(self, shared: LaunchDarklyClient) -> None:
        self._client = shared.client

    def prepare(self, case: Case) -> Prepared:
        return Prepared(
            call=partial(self._client.variation_detail, case.flag_key, default=DEFAULT),
            contexts=build_contexts(case),
            answer=_answer_from_detail,
        )

    def close(self) -> None:
        pass


class InternalRunner:
    """`Evaluator.evaluate(flag, context, event_factory)` with the flag fetched beforehand: the
    SDK's evaluation alone, without hooks, store lookup and event plumbing."""

    label = "LD Evaluator.evaluate (internal)"
    side = "peer"
    group = "evaluator"

    def __init__(self, shared: LaunchDarklyClient) -> None:
        client: Any = shared.client
        self._evaluator = client._evaluator
        self._store = client._data_system.store
        self._event_factory = client._event_factory_with_reasons

    def prepare(self, case: Case) -> Prepared:
        flag = self._store.get(FEATURES, case.flag_key)
        if flag is None:
            raise LookupError(f"flag {case.flag_key!r} missing from the SDK's store")
        return Prepared(
            call=partial(self._evaluator.evaluate, flag, event_factory=self._event_factory),
            contexts=build_contexts(case),
            answer=_answer_from_result,
        )

    def close(self) -> None:
        pass


class VariationRunner:
    """`LDClient.variation(key, context, default)`, with events off or on. With events on, each
    timed repeat ends with a wait until the SDK's event thread has summarised every evaluation
    recorded (`settle`), so that work is counted. Flushes happen on the SDK's own timer."""

    side = "peer"

    def __init__(self, shared: LaunchDarklyClient, *, events: bool) -> None:
        self._client: Any = shared.client
        self.group = "events on" if events else "events off"
        self.label = f"LD variation, {self.group}"
        self._events = events

    def prepare(self, case: Case) -> Prepared:
        return Prepared(
            call=partial(self._client.variation, case.flag_key, default=DEFAULT),
            contexts=build_contexts(case),
            answer=_answer_from_detail,
            detail=partial(self._client.variation_detail, case.flag_key, default=DEFAULT),
            settle=self._settle if self._events else None,
        )

    def _settle(self) -> None:
        self._client._event_processor._wait_until_inactive()

    def remarks(self) -> list[str]:
        """Whether the SDK dropped events while timed (its inbox was full): numbers would
        then flatter it."""
        if self._events and getattr(self._client._event_processor, "_inbox_full", False):
            return [f"{self.label}: its event inbox overflowed, some evaluations were not recorded"]
        return []

    def close(self) -> None:
        pass


def _answer_from_detail(detail: Any) -> Answer:
    value = None if detail.variation_index is None else detail.value
    return Answer(value=value, variation_index=detail.variation_index, reason=dict(detail.reason))


def _answer_from_result(result: Any) -> Answer:
    return _answer_from_detail(result.detail)
