"""The official `launchdarkly-server-sdk` as benchmark runners: its public `variation_detail`, and
its internal `Evaluator.evaluate` (reached through the client's private attributes, so the two
share one store). The client reads a file data source and sends no events.
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
    """One `LDClient` over a temporary data file; both runners below evaluate through it."""

    def __init__(self, data: Json) -> None:
        logging.getLogger("ldclient").setLevel(logging.WARNING)
        self._directory = tempfile.TemporaryDirectory(prefix="flagstaff-bench-")
        path = Path(self._directory.name) / "data.json"
        path.write_text(json.dumps(data))
        config = Config(
            "bench-sdk-key",
            update_processor_class=Files.new_data_source(paths=[str(path)]),
            send_events=False,
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


def _answer_from_detail(detail: Any) -> Answer:
    value = None if detail.variation_index is None else detail.value
    return Answer(value=value, variation_index=detail.variation_index, reason=dict(detail.reason))


def _answer_from_result(result: Any) -> Answer:
    return _answer_from_detail(result.detail)
