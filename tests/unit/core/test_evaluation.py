"""Evaluation outcomes beyond the shared vectors: what events need, errors, big segments, cycles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from flagstaff_core import (
    BigSegmentsStatus,
    Clause,
    Context,
    ErrorKind,
    Flag,
    FlagData,
    FlagRule,
    ReasonKind,
    Segment,
    VariationOrRollout,
    decode_context,
    decode_data,
    evaluate,
    evaluate_key,
)
from official_evaluator import official_evaluate

USER = {"kind": "user", "key": "u1"}


def _flag(**fields: Any) -> dict[str, Any]:
    return {
        "on": True,
        "variations": ["off", "on", "other"],
        "offVariation": 0,
        "fallthrough": {"variation": 1},
        **fields,
    }


def _agree(data: dict[str, Any], key: str, context: dict[str, Any], **kwargs: Any) -> Any:
    evaluation = evaluate_key(decode_data(data), key, decode_context(context), **kwargs)
    theirs = official_evaluate(
        data,
        key,
        context,
        **({"memberships": kwargs["big_segments"].table} if "big_segments" in kwargs else {}),
    )
    detail = evaluation.detail
    assert (detail.value, detail.variation_index, detail.reason.to_json()) == (
        theirs["value"],
        theirs["variationIndex"],
        theirs["reason"],
    )
    assert [(p.flag.key, p.prereq_of) for p in evaluation.prerequisites] == theirs["prerequisites"]
    return evaluation


def test_prerequisites_are_reported_deepest_first_with_prereq_of() -> None:
    data = {
        "flags": {
            "top": _flag(
                prerequisites=[{"key": "mid", "variation": 1}, {"key": "other", "variation": 1}]
            ),
            "mid": _flag(prerequisites=[{"key": "leaf", "variation": 1}]),
            "leaf": _flag(),
            "other": _flag(trackEvents=True),
        }
    }
    evaluation = _agree(data, "top", USER)
    assert [(p.flag.key, p.prereq_of) for p in evaluation.prerequisites] == [
        ("leaf", "mid"), ("mid", "top"), ("other", "top"),
    ]  # fmt: skip
    assert evaluation.prerequisite_keys == ("mid", "other")
    assert evaluation.prerequisites[2].track_events
    assert not evaluation.prerequisites[0].track_events


def test_failed_prerequisite_stops_and_serves_the_off_variation() -> None:
    data = {
        "flags": {
            "top": _flag(
                prerequisites=[{"key": "gone", "variation": 1}, {"key": "never", "variation": 1}]
            ),
            "never": _flag(),
            "offprereq": _flag(on=False, offVariation=1),
            "top2": _flag(prerequisites=[{"key": "offprereq", "variation": 1}]),
        }
    }
    evaluation = _agree(data, "top", USER)
    assert evaluation.reason.kind is ReasonKind.PREREQUISITE_FAILED
    assert evaluation.reason.prerequisite_key == "gone"
    assert evaluation.prerequisite_keys == ("gone",)
    assert evaluation.prerequisites == ()
    # An off prerequisite fails even when its off variation is the wanted one.
    assert _agree(data, "top2", USER).reason.prerequisite_key == "offprereq"


def test_prerequisite_and_segment_cycles_are_malformed() -> None:
    data = {
        "flags": {
            "a": _flag(prerequisites=[{"key": "b", "variation": 1}]),
            "b": _flag(prerequisites=[{"key": "a", "variation": 1}]),
            "seg": _flag(
                rules=[
                    {
                        "id": "r",
                        "variation": 2,
                        "clauses": [{"attribute": "", "op": "segmentMatch", "values": ["s1"]}],
                    }
                ]
            ),
        },
        "segments": {
            "s1": {
                "rules": [{"clauses": [{"attribute": "", "op": "segmentMatch", "values": ["s2"]}]}]
            },
            "s2": {
                "rules": [{"clauses": [{"attribute": "", "op": "segmentMatch", "values": ["s1"]}]}]
            },
        },
    }
    for key in ("a", "b", "seg"):
        evaluation = _agree(data, key, USER)
        assert evaluation.reason.error_kind is ErrorKind.MALFORMED_FLAG
        assert evaluation.value is None


def test_full_events_are_due_for_tracked_flags_rules_fallthrough_and_experiments() -> None:
    always = {"attribute": "key", "op": "in", "values": [""], "negate": True}
    experiment = {"kind": "experiment", "variations": [{"variation": 1, "weight": 100000}]}
    data = decode_data(
        {
            "flags": {
                "plain": _flag(),
                "tracked": _flag(trackEvents=True),
                "rule": _flag(
                    rules=[{"id": "r", "variation": 2, "trackEvents": True, "clauses": [always]}]
                ),
                "fallthrough": _flag(trackEventsFallthrough=True),
                "experiment": _flag(fallthrough={"rollout": experiment}),
                "off": _flag(on=False, trackEventsFallthrough=True),
            }
        }
    )
    context = Context.create("u1")
    due = {}
    for key in ("plain", "tracked", "rule", "fallthrough", "experiment", "off"):
        flag = data.flag(key)
        assert flag is not None
        evaluation = evaluate(flag, context, data)
        due[key] = (evaluation.track_events, evaluation.force_reason)
    assert due == {
        "plain": (False, False),
        "tracked": (True, False),
        "rule": (True, True),
        "fallthrough": (True, True),
        "experiment": (True, True),
        "off": (False, False),
    }


def test_flag_settings_for_events_are_kept_on_the_flag() -> None:
    data = decode_data(
        {
            "flags": {
                "f": _flag(debugEventsUntilDate=1234, samplingRatio=5, excludeFromSummaries=True)
            }
        }
    )
    evaluation = evaluate_key(data, "f", Context.create("u"))
    assert evaluation.debug_events_until_date == 1234
    assert evaluation.flag is not None
    assert (evaluation.flag.sampling_ratio, evaluation.flag.exclude_from_summaries) == (5, True)


def test_missing_flag_and_missing_context() -> None:
    data = decode_data({"flags": {"f": _flag()}})
    assert (
        evaluate_key(data, "nope", Context.create("u")).reason.error_kind
        is ErrorKind.FLAG_NOT_FOUND
    )
    flag = data.flag("f")
    assert flag is not None
    no_context = evaluate(flag, None, data)
    assert no_context.reason.error_kind is ErrorKind.USER_NOT_SPECIFIED
    assert (no_context.value, no_context.variation_index) == (None, None)
    assert evaluate_key(data, "nope", None).reason.error_kind is ErrorKind.USER_NOT_SPECIFIED


class Memberships:
    """An in-memory big-segment membership port."""

    def __init__(self, table: Mapping[str, tuple[Mapping[str, bool] | None, str]]) -> None:
        self.table = table
        self.queries: list[str] = []

    def membership(self, context_key: str) -> tuple[Mapping[str, bool] | None, BigSegmentsStatus]:
        self.queries.append(context_key)
        membership, status = self.table.get(context_key, (None, "HEALTHY"))
        return membership, BigSegmentsStatus(status)


BIG = {
    "flags": {
        "f": _flag(rules=[{"id": "r", "variation": 2, "clauses": [
            {"attribute": "", "op": "segmentMatch", "values": ["big", "big2"]}]}]),
    },
    "segments": {
        "big": {"unbounded": True, "generation": 2, "included": ["u-in"],
                "rules": [{"clauses": [{"attribute": "plan", "op": "in", "values": ["gold"]}]}]},
        "big2": {"unbounded": True, "generation": 1},
    },
}  # fmt: skip


def test_big_segment_membership_comes_from_the_port() -> None:
    port = Memberships({
        "u-yes": ({"big.g2": True}, "HEALTHY"),
        "u-no": ({"big.g2": False}, "STALE"),
        "u-in": ({}, "HEALTHY"),
    })  # fmt: skip
    yes = _agree(BIG, "f", {"kind": "user", "key": "u-yes"}, big_segments=port)
    assert (yes.value, yes.reason.big_segments_status) == ("other", BigSegmentsStatus.HEALTHY)
    no = _agree(BIG, "f", {"kind": "user", "key": "u-no"}, big_segments=port)
    assert (no.value, no.reason.big_segments_status) == ("on", BigSegmentsStatus.STALE)
    # Included lists do not apply to big segments; rules do.
    assert _agree(BIG, "f", {"kind": "user", "key": "u-in"}, big_segments=port).value == "on"
    gold = _agree(BIG, "f", {"kind": "user", "key": "u-gold", "plan": "gold"}, big_segments=port)
    assert gold.value == "other"
    # One query per context key per evaluation, even when it meets two big segments ("u-no").
    assert port.queries == ["u-yes", "u-no", "u-in", "u-gold"]


def test_big_segment_without_a_port_or_generation_is_not_configured() -> None:
    evaluation = _agree(BIG, "f", {"kind": "user", "key": "u"})
    assert evaluation.reason.big_segments_status is BigSegmentsStatus.NOT_CONFIGURED
    assert evaluation.reason.to_json() == {
        "kind": "FALLTHROUGH",
        "bigSegmentsStatus": "NOT_CONFIGURED",
    }
    # Without a port the membership is unknown, but the segment's rules still apply.
    gold = _agree(BIG, "f", {"kind": "user", "key": "u", "plan": "gold"})
    assert gold.value == "other"
    assert gold.reason.big_segments_status is BigSegmentsStatus.NOT_CONFIGURED
    no_generation = {**BIG, "segments": {"big": {"unbounded": True}}}
    port = Memberships({})
    result = _agree(no_generation, "f", {"kind": "user", "key": "u"}, big_segments=port)
    assert result.reason.big_segments_status is BigSegmentsStatus.NOT_CONFIGURED
    assert port.queries == []


def test_segment_rule_for_a_missing_rollout_kind_does_not_match() -> None:
    # Go's reference evaluator and Flagstaff: no match. (The Python SDK matches; see the docs.)
    data = decode_data({
        "flags": {"f": _flag(rules=[{"id": "r", "variation": 2, "clauses": [
            {"attribute": "", "op": "segmentMatch", "values": ["s"]}]}])},
        "segments": {"s": {"rules": [
            {"clauses": [], "weight": 100000, "rolloutContextKind": "org"}]}},
    })  # fmt: skip
    assert evaluate_key(data, "f", Context.create("u")).value == "on"
    assert evaluate_key(data, "f", Context.create("o", "org")).value == "other"


def test_a_chain_deeper_than_the_stack_is_an_error_not_an_exception() -> None:
    depth = 3000
    flags = {
        f"f{i}": _flag(prerequisites=[{"key": f"f{i + 1}", "variation": 1}]) for i in range(depth)
    }
    flags[f"f{depth}"] = _flag()
    data = decode_data({"flags": flags})
    evaluation = evaluate_key(data, "f0", Context.create("u"))
    assert evaluation.reason.error_kind is ErrorKind.EXCEPTION
    assert evaluation.value is None
    shallow = evaluate_key(data, f"f{depth - 10}", Context.create("u"))
    assert (shallow.value, shallow.reason.kind) == ("on", ReasonKind.FALLTHROUGH)


def test_flags_and_segments_built_directly_are_compiled_when_first_evaluated() -> None:
    # The model does not compile itself; `evaluate` compiles what the decoder did not see, and a
    # `replace`d flag gets its own compiled form rather than its original's.
    segment = Segment(key="beta", version=1, included=("u1",))
    flag = Flag(
        key="f",
        version=1,
        on=True,
        variations=("off", "on"),
        off_variation=0,
        fallthrough=VariationOrRollout(variation=0),
        rules=(
            FlagRule(
                clauses=(Clause(attribute="", op="segmentMatch", values=("beta",)),), variation=1
            ),
        ),
    )
    data = FlagData(flags={"f": flag}, segments={"beta": segment})
    user = Context.create("u1")
    assert evaluate(flag, user, data).value == "on"
    assert evaluate(flag, Context.create("u2"), data).value == "off"
    switched_off = replace(flag, on=False)
    assert evaluate(switched_off, user, data).detail.reason.kind is ReasonKind.OFF
    assert evaluate(flag, user, data).value == "on"
