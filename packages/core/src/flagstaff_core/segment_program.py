"""Compiles segments into membership tests, and clause lists into matchers where a `segmentMatch`
clause tests the segments it names (flag rules and segment rules alike). The compiled test is
kept on the segment (`compiled_segment`); two threads compiling at once build equal tests and
either may be kept. Big-segment memberships are asked once per context key per evaluation, in the
`Scope`. Must not do I/O or keep state between evaluations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from flagstaff_core.attribute import parse_attribute
from flagstaff_core.bucketing import bucket, bucket_prefix, value_getter
from flagstaff_core.clause import Matcher, compile_clause, compile_clauses
from flagstaff_core.context import DEFAULT_KIND
from flagstaff_core.reason import BigSegmentsStatus
from flagstaff_core.scope import MalformedFlagError

if TYPE_CHECKING:
    from flagstaff_core.context import Context
    from flagstaff_core.model import Clause, Segment, SegmentRule
    from flagstaff_core.scope import Scope


def compiled_segment(segment: Segment) -> Callable[[Context, Scope], bool]:
    """The membership test of `segment`, compiled and kept on the segment on first use."""
    matches: Callable[[Context, Scope], bool] | None = segment._compiled
    if matches is None:
        matches = compile_segment(segment)
        object.__setattr__(segment, "_compiled", matches)
    return matches


def compile_clause_list(clauses: tuple[Clause, ...]) -> tuple[list[Matcher], bool]:
    """A matcher per clause (`segmentMatch` ones test the segments they name) and whether any
    of them needs the scope's segments."""
    matchers: list[Matcher] = []
    uses_segments = False
    for clause in clauses:
        if clause.op == "segmentMatch":
            uses_segments = True
            matchers.append(_compile_segment_match(clause))
        else:
            matchers.append(compile_clause(clause))
    return matchers, uses_segments


def _compile_segment_match(clause: Clause) -> Matcher:
    keys = tuple(v for v in clause.values if type(v) is str)
    negate = clause.negate

    def match(context: Context, scope: Scope | None) -> bool:
        segments = scope.segments  # type: ignore[union-attr]
        for key in keys:
            segment = segments.get(key)
            if segment is None:
                continue
            matches = segment._compiled
            if matches is None:
                matches = compiled_segment(segment)
            if matches(context, scope):
                return not negate
        return negate

    return match


def compile_segment(segment: Segment) -> Callable[[Context, Scope], bool]:
    """A closure telling whether a context is in `segment` (not kept: see `compiled_segment`)."""
    segment_key = segment.key
    rule_matchers = []
    recursive = False
    for rule in segment.rules:
        matchers, uses_segments = compile_clause_list(rule.clauses)
        recursive = recursive or uses_segments
        rule_matchers.append(_compile_segment_rule(segment, rule, compile_clauses(matchers)))
    rules = tuple(rule_matchers)

    def match_rules(context: Context, scope: Scope) -> bool:
        if not rules:
            return False
        if not recursive:
            for rule in rules:  # noqa: SIM110 - a loop avoids building a generator per call
                if rule(context, scope):
                    return True
            return False
        if scope.segment_stack is None:
            scope.segment_stack = []
        scope.segment_stack.append(segment_key)
        try:
            for rule in rules:  # noqa: SIM110 - a loop avoids building a generator per call
                if rule(context, scope):
                    return True
            return False
        finally:
            scope.segment_stack.pop()

    def guard(context: Context, scope: Scope) -> None:
        if scope.segment_stack is not None and segment_key in scope.segment_stack:
            raise MalformedFlagError(f"segment cycle through {segment_key!r}")

    if segment.unbounded:
        return _compile_big_segment(segment, match_rules, guard)

    included = frozenset(segment.included)
    excluded = frozenset(segment.excluded)
    included_contexts = tuple(
        (t.context_kind or DEFAULT_KIND, frozenset(t.values)) for t in segment.included_contexts
    )
    excluded_contexts = tuple(
        (t.context_kind or DEFAULT_KIND, frozenset(t.values)) for t in segment.excluded_contexts
    )

    def matches(context: Context, scope: Scope) -> bool:
        if recursive:
            guard(context, scope)
        keys = context._key_by_kind
        user_key = keys.get(DEFAULT_KIND)
        if user_key is not None and user_key in included:
            return True
        for kind, values in included_contexts:
            key = keys.get(kind)
            if key is not None and key in values:
                return True
        if user_key is not None and user_key in excluded:
            return False
        for kind, values in excluded_contexts:
            key = keys.get(kind)
            if key is not None and key in values:
                return False
        return match_rules(context, scope)

    return matches


def _compile_segment_rule(segment: Segment, rule: SegmentRule, clauses: Matcher) -> Matcher:
    if rule.weight is None:
        return clauses
    threshold = rule.weight / 100000.0
    kind = rule.rollout_context_kind or DEFAULT_KIND
    path: tuple[str, ...] | None = ("key",)
    if rule.bucket_by:
        path = parse_attribute(rule.bucket_by, rule.rollout_context_kind)
    getter = value_getter(path)
    prefix = bucket_prefix(segment.key, segment.salt, None)

    def matches(context: Context, scope: Scope | None) -> bool:
        if not clauses(context, scope):
            return False
        attributes = context._attributes_by_kind.get(kind)
        if attributes is None:
            return False  # as the Go reference: a context without the kind is not in the rollout
        if getter is None:
            raise MalformedFlagError(f"invalid bucketBy reference {rule.bucket_by!r}")
        return bucket(prefix, getter(attributes)) < threshold

    return matches


def _compile_big_segment(
    segment: Segment,
    match_rules: Callable[[Context, Scope], bool],
    guard: Callable[[Context, Scope], None],
) -> Callable[[Context, Scope], bool]:
    generation = segment.generation
    kind = segment.unbounded_context_kind or DEFAULT_KIND
    reference = f"{segment.key}.g{generation}"

    def matches(context: Context, scope: Scope) -> bool:
        guard(context, scope)
        if generation is None:
            # Without a generation the membership cannot be queried (data from an old writer).
            scope.big_segments_status = BigSegmentsStatus.NOT_CONFIGURED
            return False
        key = context._key_by_kind.get(kind)
        if key is None:
            return False
        memberships = scope.memberships
        if memberships is not None and key in memberships:
            membership = memberships[key]
        else:
            if scope.big_segments is None:
                # As the official Python SDK: membership unknown, but the rules still apply.
                membership = None
                scope.big_segments_status = BigSegmentsStatus.NOT_CONFIGURED
            else:
                membership, scope.big_segments_status = scope.big_segments.membership(key)
            if memberships is None:
                memberships = scope.memberships = {}
            memberships[key] = membership
        included = None if membership is None else membership.get(reference)
        if included is not None:
            return included
        return match_rules(context, scope)

    return matches
