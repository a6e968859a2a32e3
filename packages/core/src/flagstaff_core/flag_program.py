"""Compiles flags into closures, so evaluation allocates almost nothing.

Every outcome that cannot depend on the context (off, a fixed-variation rule, a target, a fixed
fallthrough, each rollout bucket) becomes a pre-built `Evaluation`. The compiled form is kept on
the flag (`compiled_flag`); two threads compiling the same flag at once build equal forms and
either may be kept. Rules' clauses, `segmentMatch` included, are `segment_program`'s. Must not do
I/O or keep state between evaluations; per-evaluation state lives in `Scope`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flagstaff_core.attribute import parse_attribute
from flagstaff_core.bucketing import bucket, bucket_prefix, value_getter
from flagstaff_core.clause import Matcher
from flagstaff_core.context import DEFAULT_KIND
from flagstaff_core.evaluation import (
    Evaluation,
    build_evaluation,
    build_prerequisite_evaluation,
)
from flagstaff_core.reason import (
    ErrorKind,
    EvaluationDetail,
    Reason,
    ReasonKind,
)
from flagstaff_core.scope import MalformedFlagError
from flagstaff_core.segment_program import compile_clause_list

if TYPE_CHECKING:
    from flagstaff_core.context import Context
    from flagstaff_core.model import Flag, Rollout
    from flagstaff_core.scope import Scope

Outcome = Callable[["Context"], Evaluation]
Run = Callable[["Context", "Scope | None"], Evaluation]

_OFF = Reason(kind=ReasonKind.OFF)
_FALLTHROUGH = Reason(kind=ReasonKind.FALLTHROUGH)
_TARGET_MATCH = Reason(kind=ReasonKind.TARGET_MATCH)
_MALFORMED = Reason.error(ErrorKind.MALFORMED_FLAG)
_NO_CONTEXT = Reason.error(ErrorKind.USER_NOT_SPECIFIED)


@dataclass(frozen=True, slots=True)
class CompiledFlag:
    constant: Evaluation | None
    run: Run
    needs_scope: bool
    malformed: Evaluation
    no_context: Evaluation


class _Results:
    """Builds the pre-made evaluations of one flag."""

    def __init__(self, flag: Flag) -> None:
        self.flag = flag
        self.malformed = build_evaluation(
            flag, EvaluationDetail(None, None, _MALFORMED), flag.track_events, False, (), ()
        )

    def result(
        self, variation: int | None, reason: Reason, *, rule_tracked: bool = False
    ) -> Evaluation:
        flag = self.flag
        if variation is None:
            detail = EvaluationDetail(None, None, reason)
        elif 0 <= variation < len(flag.variations):
            detail = EvaluationDetail(flag.variations[variation], variation, reason)
        else:
            return self.malformed
        experiment = (
            reason.in_experiment
            or rule_tracked
            or (reason.kind is ReasonKind.FALLTHROUGH and flag.track_events_fallthrough)
        )
        return build_evaluation(flag, detail, flag.track_events or experiment, experiment, (), ())


def _compile_rollout(
    results: _Results, rollout: Rollout, reason: Reason, rule_tracked: bool
) -> Outcome | Evaluation:
    flag = results.flag
    if not rollout.variations:
        return results.malformed
    experiment = rollout.is_experiment
    kind = rollout.context_kind or DEFAULT_KIND
    path: tuple[str, ...] | None = ("key",)
    if not experiment and rollout.bucket_by:
        path = parse_attribute(rollout.bucket_by, rollout.context_kind)
    prefix = bucket_prefix(flag.key, flag.salt, rollout.seed)
    in_experiment = Reason(
        kind=reason.kind, rule_index=reason.rule_index, rule_id=reason.rule_id, in_experiment=True
    )
    steps: list[tuple[float, Evaluation]] = []
    total = 0.0
    for weighted in rollout.variations:
        # Summed in the same order and precision as the official SDK.
        total += weighted.weight / 100000.0
        tracked = experiment and not weighted.untracked
        chosen = in_experiment if tracked else reason
        steps.append((total, results.result(weighted.variation, chosen, rule_tracked=rule_tracked)))
    # A context without the rollout's kind lands in the first bucket and is not in the experiment.
    absent = results.result(rollout.variations[0].variation, reason, rule_tracked=rule_tracked)
    last = steps[-1][1]
    table = tuple(steps)
    getter = value_getter(path)
    if path is not None and len(path) == 1:
        (name,) = path

        # The common shape (bucket by one top-level attribute, usually `key`) skips the getter.
        def choose_by_name(context: Context) -> Evaluation:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return absent
            point = bucket(prefix, attributes.get(name))
            for threshold, evaluation in table:
                if point < threshold:
                    return evaluation
            return last

        return choose_by_name

    def choose(context: Context) -> Evaluation:
        attributes = context._attributes_by_kind.get(kind)
        if attributes is None:
            return absent
        if getter is None:
            raise MalformedFlagError(f"invalid bucketBy reference {rollout.bucket_by!r}")
        point = bucket(prefix, getter(attributes))
        for threshold, evaluation in table:
            if point < threshold:
                return evaluation
        return last

    return choose


def _always(context: Context, scope: Scope | None) -> bool:
    return True


def _compile_target_steps(
    flag: Flag, results: _Results
) -> tuple[tuple[str, dict[str, Evaluation]], ...]:
    steps: list[tuple[str, dict[str, Evaluation]]] = []

    def add(kind: str, keys: tuple[str, ...], evaluation: Evaluation) -> None:
        # Consecutive entries of one kind share a table; the first entry naming a key wins.
        if not steps or steps[-1][0] != kind:
            steps.append((kind, {}))
        table = steps[-1][1]
        for key in keys:
            table.setdefault(key, evaluation)

    target_match = _TARGET_MATCH
    if not flag.context_targets:
        for target in flag.targets:
            add(DEFAULT_KIND, target.values, results.result(target.variation, target_match))
    else:
        for target in flag.context_targets:
            kind = target.context_kind or DEFAULT_KIND
            keys = target.values
            if kind == DEFAULT_KIND:
                # User keys live in `targets`, in the first entry with the same variation.
                keys = next((t.values for t in flag.targets if t.variation == target.variation), ())
            add(kind, keys, results.result(target.variation, target_match))
    return tuple((kind, table) for kind, table in steps if table)


def compiled_flag(flag: Flag) -> CompiledFlag:
    """The compiled form of `flag`, compiled and kept on the flag the first time it is asked for."""
    compiled: CompiledFlag | None = flag._compiled
    if compiled is None:
        compiled = compile_flag(flag)
        object.__setattr__(flag, "_compiled", compiled)
    return compiled


def compile_flag(flag: Flag) -> CompiledFlag:
    """The evaluator of `flag` and its constant results (not kept: see `compiled_flag`)."""
    results = _Results(flag)
    no_context = build_evaluation(
        flag, EvaluationDetail(None, None, _NO_CONTEXT), False, False, (), ()
    )
    off = results.result(flag.off_variation, _OFF)
    if not flag.on:
        return CompiledFlag(off, lambda context, scope: off, False, results.malformed, no_context)

    needs_scope = bool(flag.prerequisites)
    prerequisite_check = _compile_prerequisites(flag, results) if flag.prerequisites else None
    target_steps = _compile_target_steps(flag, results)

    rule_steps: list[tuple[Matcher, tuple[Matcher, ...], Evaluation | None, Outcome | None]] = []
    for index, rule in enumerate(flag.rules):
        matchers, uses_segments = compile_clause_list(rule.clauses)
        needs_scope = needs_scope or uses_segments
        reason = Reason(kind=ReasonKind.RULE_MATCH, rule_index=index, rule_id=rule.id)
        if rule.variation is not None:
            outcome: Outcome | Evaluation = results.result(
                rule.variation, reason, rule_tracked=rule.track_events
            )
        elif rule.rollout is not None:
            outcome = _compile_rollout(results, rule.rollout, reason, rule.track_events)
        else:
            outcome = results.malformed
        first = matchers[0] if matchers else _always
        rest = tuple(matchers[1:])
        if isinstance(outcome, Evaluation):
            rule_steps.append((first, rest, outcome, None))
        else:
            rule_steps.append((first, rest, None, outcome))

    if flag.fallthrough.variation is not None:
        fallthrough: Outcome | Evaluation = results.result(flag.fallthrough.variation, _FALLTHROUGH)
    elif flag.fallthrough.rollout is not None:
        fallthrough = _compile_rollout(results, flag.fallthrough.rollout, _FALLTHROUGH, False)
    else:
        fallthrough = results.malformed

    if (
        isinstance(fallthrough, Evaluation)
        and prerequisite_check is None
        and not target_steps
        and not rule_steps
    ):
        constant = fallthrough
        return CompiledFlag(
            constant, lambda context, scope: constant, False, results.malformed, no_context
        )

    rules = tuple(rule_steps)
    fixed_fallthrough = fallthrough if isinstance(fallthrough, Evaluation) else None
    rollout_fallthrough = None if isinstance(fallthrough, Evaluation) else fallthrough

    def run(context: Context, scope: Scope | None) -> Evaluation:
        if prerequisite_check is not None:
            failure = prerequisite_check(context, scope)  # type: ignore[arg-type]
            if failure is not None:
                return failure
        if target_steps:
            keys = context._key_by_kind
            for kind, table in target_steps:
                key = keys.get(kind)
                if key is not None:
                    hit = table.get(key)
                    if hit is not None:
                        return hit
        for first, rest, fixed, rollout in rules:
            # Clauses are checked here rather than composed, saving a call per rule; most rules
            # fail on their first clause.
            if not first(context, scope):
                continue
            for clause in rest:
                if not clause(context, scope):
                    break
            else:
                if fixed is not None:
                    return fixed
                return rollout(context)  # type: ignore[misc]
        if fixed_fallthrough is not None:
            return fixed_fallthrough
        return rollout_fallthrough(context)  # type: ignore[misc]

    return CompiledFlag(None, run, needs_scope, results.malformed, no_context)


def _compile_prerequisites(
    flag: Flag, results: _Results
) -> Callable[[Context, Scope], Evaluation | None]:
    flag_key = flag.key
    checks = tuple(
        (
            p.key,
            p.variation,
            results.result(
                flag.off_variation,
                Reason(kind=ReasonKind.PREREQUISITE_FAILED, prerequisite_key=p.key),
            ),
        )
        for p in flag.prerequisites
    )

    def check(context: Context, scope: Scope) -> Evaluation | None:
        stack = scope.flag_stack
        direct_keys = None
        if stack is None:
            stack = scope.flag_stack = []
            direct_keys = scope.prerequisite_keys = []
            scope.prerequisites = []
        evaluated = scope.prerequisites
        assert evaluated is not None  # created with the stack
        flags = scope.flags
        stack.append(flag_key)
        try:
            for key, variation, failure in checks:
                if key in stack:
                    raise MalformedFlagError(f"prerequisite cycle through {key!r}")
                if direct_keys is not None:
                    direct_keys.append(key)
                prerequisite = flags.get(key)
                if prerequisite is None:
                    return failure
                compiled = prerequisite._compiled
                if compiled is None:
                    compiled = compiled_flag(prerequisite)
                evaluation = compiled.run(context, scope)
                evaluated.append(build_prerequisite_evaluation(flag_key, evaluation))
                if not prerequisite.on or evaluation.detail.variation_index != variation:
                    return failure
            return None
        finally:
            stack.pop()

    return check
