"""`FeatureFlagsState`: every flag's value for one context at one moment, with the methods of
`ldclient`'s object of that name, so code moving from LaunchDarkly's SDK keeps working.

A value built from the core's bootstrap dict (`flagstaff_core.all_flags_state`); it never changes
and evaluates nothing itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_META_KEYS = frozenset({"$flagsState", "$valid"})


@dataclass(frozen=True, slots=True)
class FeatureFlagsState:
    """`valid` is False when there was no data or the context was invalid (then it holds no
    flags). `values` maps each flag key to its value (None when the flag served no variation,
    i.e. the caller's default would apply); `metadata` to its `$flagsState` entry (variation,
    version, reason, trackEvents, trackReason, debugEventsUntilDate, prerequisites, as the
    options of `all_flags_state` left them).

    The dicts the methods return are new, but the JSON values in them are shared with this
    object: do not mutate them.
    """

    valid: bool
    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    metadata: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_json_dict(cls, state: Mapping[str, Any]) -> FeatureFlagsState:
        """The object for a bootstrap dict (`{KEY: value, ..., "$flagsState", "$valid"}`)."""
        metadata = state.get("$flagsState", {})
        values = {key: value for key, value in state.items() if key not in _META_KEYS}
        return cls(
            valid=state.get("$valid") is True,
            values=MappingProxyType(values),
            metadata=MappingProxyType(dict(metadata)),
        )

    def get_flag_value(self, key: str) -> Any:
        """The flag's value; None when it served no variation or there is no such flag."""
        return self.values.get(key)

    def get_flag_reason(self, key: str) -> dict[str, Any] | None:
        """The evaluation reason as JSON; None when reasons were not kept (`with_reasons` off and
        no experiment, or left out by `details_only_for_tracked_flags`) or there is no such flag."""
        meta = self.metadata.get(key)
        if meta is None:
            return None
        reason: dict[str, Any] | None = meta.get("reason")
        return reason

    def to_values_map(self) -> dict[str, Any]:
        """Flag key → value. Not for bootstrapping a browser SDK: use `to_json_dict()`."""
        return dict(self.values)

    def to_json_dict(self) -> dict[str, Any]:
        """The bootstrap JSON the LaunchDarkly JavaScript SDK takes: the values, `$flagsState`
        and `$valid`."""
        out = dict(self.values)
        out["$flagsState"] = {key: dict(meta) for key, meta in self.metadata.items()}
        out["$valid"] = self.valid
        return out

    def to_json_string(self) -> str:
        """`to_json_dict()` serialised as JSON text."""
        return json.dumps(self.to_json_dict())
