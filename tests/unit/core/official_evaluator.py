"""The official SDK's evaluator driven directly (no client, no file): an oracle for unit tests.

Only adapts inputs and outputs to plain JSON; holds no expectations of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ldclient import Context as SdkContext
from ldclient.impl.evaluator import Evaluator
from ldclient.impl.events.types import EventFactory
from ldclient.impl.model import FeatureFlag
from ldclient.impl.model import Segment as SdkSegment


def official_evaluate(
    data: Mapping[str, Any],
    flag_key: str,
    context: Mapping[str, Any],
    memberships: Mapping[str, tuple[Mapping[str, bool] | None, str]] | None = None,
) -> dict[str, Any]:
    """`{"value", "variationIndex", "reason", "prerequisites"}` from the SDK's Evaluator."""
    flags = {
        k: FeatureFlag({"key": k, "version": 1, **v}) for k, v in data.get("flags", {}).items()
    }
    segments = {
        k: SdkSegment({"key": k, "version": 1, **v}) for k, v in data.get("segments", {}).items()
    }

    def membership(key: str) -> tuple[Mapping[str, bool] | None, str]:
        if memberships is None:
            return None, "NOT_CONFIGURED"
        return memberships.get(key, (None, "HEALTHY"))

    evaluator = Evaluator(flags.get, segments.get, membership)
    result = evaluator.evaluate(
        flags[flag_key], SdkContext.from_dict(dict(context)), EventFactory(False)
    )
    detail = result.detail
    return {
        "value": detail.value,
        "variationIndex": detail.variation_index,
        "reason": detail.reason,
        "prerequisites": [(e.flag.key, e.prereq_of.key) for e in result.events or []],
    }
