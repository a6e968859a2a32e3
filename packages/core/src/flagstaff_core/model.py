"""The LaunchDarkly flag and segment model as immutable values.

Fields mirror the SDK JSON (snake_case here, camelCase on the wire; names are mapped only in
`decoder`/`encoder`). Compiling is a step applied to these values by `flag_program` and
`segment_program` (the decoder does it; `evaluate` does it on first use for a value built
directly); this module must not import its compiler. Equality and `repr` compare only the model
fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Clause:
    attribute: str
    op: str
    values: tuple[Any, ...] = ()
    negate: bool = False
    context_kind: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedVariation:
    variation: int
    weight: int
    untracked: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Rollout:
    variations: tuple[WeightedVariation, ...]
    kind: str = "rollout"
    context_kind: str | None = None
    bucket_by: str | None = None
    seed: int | None = None

    @property
    def is_experiment(self) -> bool:
        return self.kind == "experiment"


@dataclass(frozen=True, slots=True, kw_only=True)
class VariationOrRollout:
    """A fixed variation or a rollout; neither (or a bad index) is a malformed flag."""

    variation: int | None = None
    rollout: Rollout | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Prerequisite:
    key: str
    variation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A `targets` entry (context_kind None) or a `contextTargets` entry."""

    variation: int
    values: tuple[str, ...] = ()
    context_kind: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagRule:
    clauses: tuple[Clause, ...] = ()
    variation: int | None = None
    rollout: Rollout | None = None
    id: str | None = None
    track_events: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSideAvailability:
    using_mobile_key: bool = True
    using_environment_id: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    check_ratio: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Flag:
    key: str
    version: int
    on: bool = False
    variations: tuple[Any, ...] = ()
    off_variation: int | None = None
    fallthrough: VariationOrRollout = field(default_factory=VariationOrRollout)
    prerequisites: tuple[Prerequisite, ...] = ()
    targets: tuple[Target, ...] = ()
    context_targets: tuple[Target, ...] = ()
    rules: tuple[FlagRule, ...] = ()
    salt: str = ""
    track_events: bool = False
    track_events_fallthrough: bool = False
    debug_events_until_date: int | float | None = None
    client_side: bool = False
    client_side_availability: ClientSideAvailability = field(default_factory=ClientSideAvailability)
    sampling_ratio: int | None = None
    exclude_from_summaries: bool = False
    migration: Migration | None = None
    deleted: bool = False
    # The compiled form (`flag_program.CompiledFlag`), kept by `flag_program.compiled_flag`.
    # `Any` because the model sits below its compiler and cannot name the compiler's types.
    _compiled: Any = field(default=None, init=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentTarget:
    values: tuple[str, ...] = ()
    context_kind: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentRule:
    clauses: tuple[Clause, ...] = ()
    id: str | None = None
    weight: int | None = None
    bucket_by: str | None = None
    rollout_context_kind: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    key: str
    version: int
    included: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    included_contexts: tuple[SegmentTarget, ...] = ()
    excluded_contexts: tuple[SegmentTarget, ...] = ()
    rules: tuple[SegmentRule, ...] = ()
    salt: str = ""
    unbounded: bool = False
    unbounded_context_kind: str | None = None
    generation: int | None = None
    deleted: bool = False
    # The compiled membership test, kept by `segment_program.compiled_segment` (`Any`: see Flag).
    _compiled: Any = field(default=None, init=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FlagData:
    """All flags and segments of one environment; deleted items (tombstones) are kept but hidden."""

    flags: Mapping[str, Flag] = field(default_factory=dict)
    segments: Mapping[str, Segment] = field(default_factory=dict)
    _live_flags: dict[str, Flag] = field(init=False, compare=False, repr=False)
    _live_segments: dict[str, Segment] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        live_flags = {k: f for k, f in self.flags.items() if not f.deleted}
        live_segments = {k: s for k, s in self.segments.items() if not s.deleted}
        object.__setattr__(self, "_live_flags", live_flags)
        object.__setattr__(self, "_live_segments", live_segments)

    def flag(self, key: str) -> Flag | None:
        """The flag stored under `key`, or None when absent or deleted."""
        return self._live_flags.get(key)

    def segment(self, key: str) -> Segment | None:
        """The segment stored under `key`, or None when absent or deleted."""
        return self._live_segments.get(key)
