"""TestData: flags built in code for users' own tests, in the shape of LaunchDarkly's builder.
Updates reach every client using the source at once (synchronously, before `update` returns).
"""

from __future__ import annotations

import asyncio
import copy
import threading
from typing import Any

from flagstaff_core import decode_flag, decode_segment

from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.source import DataSink

Variation = bool | int
"""A variation index, or for boolean flags True/False (True is variation 0)."""


def _index(variation: Variation) -> int:
    if isinstance(variation, bool):
        return 0 if variation else 1
    return variation


class FlagBuilder:
    """Describes one flag; `TestData.update(builder)` publishes it."""

    def __init__(self, key: str) -> None:
        self._key = key
        self._on = True
        self._variations: list[Any] = [True, False]
        self._off = 1
        self._fallthrough = 0
        self._targets: dict[str, dict[int, list[str]]] = {}
        self._rules: list[dict[str, Any]] = []

    def copy(self) -> FlagBuilder:
        return copy.deepcopy(self)

    def boolean_flag(self) -> FlagBuilder:
        if self._variations != [True, False]:
            self._variations = [True, False]
            self._fallthrough, self._off = 0, 1
        return self

    def variations(self, *values: Any) -> FlagBuilder:
        self._variations = list(values)
        return self

    def on(self, on: bool) -> FlagBuilder:
        self._on = on
        return self

    def off_variation(self, variation: Variation) -> FlagBuilder:
        self._off = _index(variation)
        return self

    def fallthrough_variation(self, variation: Variation) -> FlagBuilder:
        self._fallthrough = _index(variation)
        return self

    def variation_for_all(self, variation: Variation) -> FlagBuilder:
        """Everyone gets `variation`: targets and rules cleared, flag on."""
        return self.clear_rules().clear_targets().on(True).fallthrough_variation(variation)

    def value_for_all(self, value: Any) -> FlagBuilder:
        """A single-variation flag serving `value` to everyone."""
        return self.variations(value).variation_for_all(0)

    def variation_for_key(self, kind: str, key: str, variation: Variation) -> FlagBuilder:
        index = _index(variation)
        by_variation = self._targets.setdefault(kind, {})
        for keys in by_variation.values():
            if key in keys:
                keys.remove(key)
        by_variation.setdefault(index, []).append(key)
        return self

    def variation_for_user(self, key: str, variation: Variation) -> FlagBuilder:
        return self.variation_for_key("user", key, variation)

    def if_match(self, attribute: str, *values: Any) -> RuleBuilder:
        return RuleBuilder(self).and_match(attribute, *values)

    def if_match_context(self, kind: str, attribute: str, *values: Any) -> RuleBuilder:
        return RuleBuilder(self).and_match_context(kind, attribute, *values)

    def if_not_match(self, attribute: str, *values: Any) -> RuleBuilder:
        return RuleBuilder(self).and_not_match(attribute, *values)

    def if_not_match_context(self, kind: str, attribute: str, *values: Any) -> RuleBuilder:
        return RuleBuilder(self).and_not_match_context(kind, attribute, *values)

    def clear_rules(self) -> FlagBuilder:
        self._rules = []
        return self

    def clear_targets(self) -> FlagBuilder:
        self._targets = {}
        return self

    def build(self, version: int) -> dict[str, Any]:
        """The flag's SDK JSON."""
        context_targets = [
            {"contextKind": kind, "variation": index, "values": list(keys)}
            for kind, by_variation in sorted(self._targets.items())
            for index, keys in sorted(by_variation.items())
            if keys
        ]
        return {
            "key": self._key,
            "version": version,
            "on": self._on,
            "variations": list(self._variations),
            "offVariation": self._off,
            "fallthrough": {"variation": self._fallthrough},
            "targets": [
                {"variation": t["variation"], "values": t["values"]}
                for t in context_targets
                if t["contextKind"] == "user"
            ],
            "contextTargets": [
                {**t, "values": []} if t["contextKind"] == "user" else t for t in context_targets
            ],
            "rules": copy.deepcopy(self._rules),
            "prerequisites": [],
            "salt": self._key,
        }


class RuleBuilder:
    """Clauses (all must match) and the variation served when they do."""

    def __init__(self, flag: FlagBuilder) -> None:
        self._flag = flag
        self._clauses: list[dict[str, Any]] = []

    def _clause(self, kind: str, attribute: str, values: tuple[Any, ...], negate: bool) -> None:
        self._clauses.append(
            {
                "contextKind": kind,
                "attribute": attribute,
                "op": "in",
                "values": list(values),
                "negate": negate,
            }
        )

    def and_match(self, attribute: str, *values: Any) -> RuleBuilder:
        return self.and_match_context("user", attribute, *values)

    def and_match_context(self, kind: str, attribute: str, *values: Any) -> RuleBuilder:
        self._clause(kind, attribute, values, False)
        return self

    def and_not_match(self, attribute: str, *values: Any) -> RuleBuilder:
        return self.and_not_match_context("user", attribute, *values)

    def and_not_match_context(self, kind: str, attribute: str, *values: Any) -> RuleBuilder:
        self._clause(kind, attribute, values, True)
        return self

    def then_return(self, variation: Variation) -> FlagBuilder:
        rules = self._flag._rules
        rules.append(
            {"id": f"rule{len(rules)}", "variation": _index(variation), "clauses": self._clauses}
        )
        return self._flag


class TestData:
    """A DataSource for tests: `td = TestData(); td.update(td.flag("f").variation_for_all(True))`
    then `Config(sdk_key="x", data_source=td)`."""

    __test__ = False  # not a pytest test class despite its name

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._builders: dict[str, FlagBuilder] = {}
        self._flags: dict[str, dict[str, Any]] = {}
        self._segments: dict[str, dict[str, Any]] = {}
        self._sinks: list[DataSink] = []

    @classmethod
    def data_source(cls) -> TestData:
        return cls()

    @property
    def name(self) -> str:
        return "test-data"

    def flag(self, key: str) -> FlagBuilder:
        """A builder starting from the flag as last updated, or a new boolean flag (on, true)."""
        with self._lock:
            existing = self._builders.get(key)
        return existing.copy() if existing is not None else FlagBuilder(key)

    def update(self, builder: FlagBuilder) -> TestData:
        with self._lock:
            key = builder._key
            version = self._flags.get(key, {}).get("version", 0) + 1
            item = builder.build(version)
            self._builders[key] = builder.copy()
            self._flags[key] = item
            self._publish_flag(key, item)
        return self

    def use_preconfigured_flag(self, flag: dict[str, Any]) -> TestData:
        """Publish complete flag JSON (any feature the builder lacks); the version is bumped."""
        with self._lock:
            key = flag["key"]
            version = max(flag.get("version", 0), self._flags.get(key, {}).get("version", 0)) + 1
            item = {**flag, "version": version}
            self._flags[key] = item
            self._builders.pop(key, None)
            self._publish_flag(key, item)
        return self

    def use_preconfigured_segment(self, segment: dict[str, Any]) -> TestData:
        with self._lock:
            key = segment["key"]
            current = self._segments.get(key, {}).get("version", 0)
            version = max(segment.get("version", 0), current) + 1
            item = {**segment, "version": version}
            self._segments[key] = item
            change = ChangeSet(full=False, segments={key: decode_segment(item, key=key)})
            for sink in list(self._sinks):
                sink.apply(change)
        return self

    def _publish_flag(self, key: str, item: dict[str, Any]) -> None:
        change = ChangeSet(full=False, flags={key: decode_flag(item, key=key)})
        for sink in list(self._sinks):
            sink.apply(change)

    def _snapshot(self) -> ChangeSet:
        return ChangeSet(
            full=True,
            flags={key: decode_flag(item, key=key) for key, item in self._flags.items()},
            segments={key: decode_segment(item, key=key) for key, item in self._segments.items()},
            authoritative=True,
        )

    def attach(self, sink: DataSink) -> None:
        """Deliver everything now and every later update to `sink`."""
        with self._lock:
            sink.apply(self._snapshot())
            self._sinks.append(sink)
        sink.report_valid()

    def detach(self, sink: DataSink) -> None:
        with self._lock:
            self._sinks = [s for s in self._sinks if s is not sink]

    async def run(self, sink: DataSink) -> None:
        self.attach(sink)
        try:
            await asyncio.Event().wait()
        finally:
            self.detach(sink)
