"""Experiments in LaunchDarkly's shapes, pure: the checked `ExperimentPost` and `IterationInput`
bodies, and the semantic patch of an experiment (`updateName`, `updateDescription`,
`startIteration`, `stopIteration`, `archiveExperiment`, `restoreExperiment`). What can only be
checked against the flag and the metrics (they exist, the rule, the variations) is
`services.experiments`'.

One flag per iteration (LaunchDarkly's `flags` map with one entry). A treatment's `_id` is the
flag variation's `_id` it serves; `allocationPercent` is a decimal string with at most three
decimals ("33.333"), in thousandths of a percent on the flag (the rollout weights).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from flagstaff_server.domain.document import (
    Document,
    field,
    is_valid_context_kind,
    refuse_unknown,
    require_bool,
    require_int,
    require_list,
    require_object,
    require_string,
    require_strings,
)
from flagstaff_server.domain.instruction import check_instructions
from flagstaff_server.domain.validation import check_key, check_name, check_tags, check_text
from flagstaff_server.errors import InvalidInput, ValidationError

FALLTHROUGH = "fallthrough"
TOTAL_WEIGHT = 100_000
PATCH_KINDS = (
    "updateName",
    "updateDescription",
    "startIteration",
    "stopIteration",
    "archiveExperiment",
    "restoreExperiment",
)


def weight_of(percent: Any, path: str) -> int:
    """`allocationPercent` ("10", "33.333") in thousandths of a percent."""
    if not isinstance(percent, str | int | float) or isinstance(percent, bool):
        raise ValidationError(
            "'allocationPercent' is a number in a string, such as \"50\"", path=path
        )
    try:
        value = Decimal(str(percent))
    except InvalidOperation as exc:
        raise ValidationError(
            f"'allocationPercent' {percent!r} is not a number", path=path
        ) from exc
    weight = value * 1000
    if (
        not value.is_finite()
        or weight != weight.to_integral_value()
        or not 0 <= weight <= TOTAL_WEIGHT
    ):
        raise ValidationError(
            "'allocationPercent' must be 0-100 with at most three decimals", path=path
        )
    return int(weight)


def check_experiment(body: Any) -> tuple[Document, Document]:
    """The experiment's own fields and its first iteration (unchecked against flags)."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    refuse_unknown(
        body,
        ("key", "name", "description", "maintainerId", "holdoutId", "tags", "iteration"),
        "",
    )
    key = check_key(body, "experiment", strict=True)
    if body.get("holdoutId") is not None:
        raise ValidationError("holdouts are not supported", path="/holdoutId")
    experiment: Document = {
        "key": key,
        "name": check_name(field(body, "name", ""), "/name"),
        "description": check_text(body.get("description") or "", "/description"),
        "tags": sorted(set(check_tags(body.get("tags") or [], "/tags"))),
    }
    iteration = check_iteration(field(body, "iteration", ""), "/iteration")
    return experiment, iteration


def check_iteration(value: Any, at: str) -> Document:
    """An `IterationInput`'s fields; `flags` holds exactly one flag."""
    body = require_object(value, at)
    refuse_unknown(
        body,
        (
            "hypothesis",
            "metrics",
            "primarySingleMetricKey",
            "primaryFunnelKey",
            "treatments",
            "flags",
            "randomizationUnit",
            "canReshuffleTraffic",
            "attributes",
        ),
        at,
    )
    hypothesis = check_text(field(body, "hypothesis", at), f"{at}/hypothesis")
    metrics = check_metrics(field(body, "metrics", at), f"{at}/metrics")
    if body.get("primaryFunnelKey") is not None:
        raise ValidationError(
            "funnel metric groups are not supported", path=f"{at}/primaryFunnelKey"
        )
    primary = body.get("primarySingleMetricKey")
    if primary is None:
        primary = metrics[0]["key"]
    elif primary not in [m["key"] for m in metrics]:
        raise ValidationError(
            "'primarySingleMetricKey' must be one of the iteration's metrics",
            path=f"{at}/primarySingleMetricKey",
        )
    flags = require_object(field(body, "flags", at), f"{at}/flags")
    if len(flags) != 1:
        raise ValidationError("an iteration runs on exactly one flag", path=f"{at}/flags")
    [(flag_key, flag_ref)] = flags.items()
    ref_at = f"{at}/flags/{flag_key}"
    ref = require_object(flag_ref, ref_at)
    refuse_unknown(ref, ("ruleId", "flagConfigVersion", "notInExperimentVariationId"), ref_at)
    flag = {
        "ruleId": require_string(field(ref, "ruleId", ref_at), f"{ref_at}/ruleId"),
        "flagConfigVersion": require_int(
            field(ref, "flagConfigVersion", ref_at), f"{ref_at}/flagConfigVersion"
        ),
    }
    if ref.get("notInExperimentVariationId") is not None:
        flag["notInExperimentVariationId"] = require_string(
            ref["notInExperimentVariationId"], f"{ref_at}/notInExperimentVariationId"
        )
    unit = body.get("randomizationUnit", "user")
    if not is_valid_context_kind(unit):
        raise ValidationError(f"invalid context kind {unit!r}", path=f"{at}/randomizationUnit")
    treatments = check_treatments(field(body, "treatments", at), f"{at}/treatments", flag_key)
    return {
        "hypothesis": hypothesis,
        "metrics": metrics,
        "primarySingleMetricKey": primary,
        "flags": {flag_key: flag},
        "randomizationUnit": unit,
        "canReshuffleTraffic": require_bool(
            body.get("canReshuffleTraffic", True), f"{at}/canReshuffleTraffic"
        ),
        "attributes": require_strings(body.get("attributes") or [], f"{at}/attributes"),
        "treatments": treatments,
    }


def check_metrics(value: Any, at: str) -> list[dict[str, Any]]:
    items = require_list(value, at)
    if not items:
        raise ValidationError("an iteration measures at least one metric", path=at)
    metrics: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        item_at = f"{at}/{index}"
        metric = require_object(item, item_at)
        refuse_unknown(metric, ("key", "isGroup", "primary"), item_at)
        if metric.get("isGroup"):
            raise ValidationError("metric groups are not supported", path=f"{item_at}/isGroup")
        key = require_string(field(metric, "key", item_at), f"{item_at}/key")
        if key in [m["key"] for m in metrics]:
            raise ValidationError(f"metric {key!r} is named twice", path=f"{item_at}/key")
        metrics.append({"key": key, "isGroup": False})
    return metrics


def check_treatments(value: Any, at: str, flag_key: str) -> list[dict[str, Any]]:
    items = require_list(value, at)
    if len(items) < 2:
        raise ValidationError("an iteration compares at least two treatments", path=at)
    treatments: list[dict[str, Any]] = []
    total = 0
    for index, item in enumerate(items):
        item_at = f"{at}/{index}"
        treatment = require_object(item, item_at)
        refuse_unknown(treatment, ("name", "baseline", "allocationPercent", "parameters"), item_at)
        weight = weight_of(
            field(treatment, "allocationPercent", item_at), f"{item_at}/allocationPercent"
        )
        total += weight
        parameters = require_list(field(treatment, "parameters", item_at), f"{item_at}/parameters")
        if len(parameters) != 1:
            raise ValidationError(
                "a treatment serves one variation of the iteration's flag",
                path=f"{item_at}/parameters",
            )
        parameter = require_object(parameters[0], f"{item_at}/parameters/0")
        if parameter.get("flagKey") != flag_key:
            raise ValidationError(
                f"'flagKey' must be the iteration's flag {flag_key!r}",
                path=f"{item_at}/parameters/0/flagKey",
            )
        variation = require_string(
            field(parameter, "variationId", f"{item_at}/parameters/0"),
            f"{item_at}/parameters/0/variationId",
        )
        if variation in [t["_id"] for t in treatments]:
            raise ValidationError(
                "two treatments serve the same variation",
                path=f"{item_at}/parameters/0/variationId",
            )
        treatments.append(
            {
                "_id": variation,
                "name": check_name(field(treatment, "name", item_at), f"{item_at}/name"),
                "baseline": require_bool(
                    field(treatment, "baseline", item_at), f"{item_at}/baseline"
                ),
                "allocationPercent": format_percent(weight),
                "parameters": [{"flagKey": flag_key, "variationId": variation}],
            }
        )
    if sum(t["baseline"] for t in treatments) != 1:
        raise ValidationError("exactly one treatment is the baseline", path=at)
    if total > TOTAL_WEIGHT:
        raise ValidationError("the treatments' allocations add up to more than 100", path=at)
    return treatments


def format_percent(weight: int) -> str:
    text = f"{Decimal(weight) / 1000:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def check_experiment_patch(body: Any) -> tuple[list[dict[str, Any]], str | None]:
    """A semantic patch of an experiment: its instructions (kinds checked) and comment."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    comment = body.get("comment")
    if comment is not None:
        comment = check_text(comment, "/comment")
    instructions = check_instructions(body.get("instructions"))
    for index, instruction in enumerate(instructions):
        kind = instruction["kind"]
        if kind not in PATCH_KINDS:
            raise ValidationError(
                f"unknown instruction kind {kind!r} for an experiment: use "
                + ", ".join(PATCH_KINDS),
                path=f"/instructions/{index}/kind",
            )
        if kind in ("updateName", "updateDescription"):
            check = check_name if kind == "updateName" else check_text
            check(
                field(instruction, "value", f"/instructions/{index}"),
                f"/instructions/{index}/value",
            )
        if kind == "stopIteration":
            for name in ("winningTreatmentId", "winningReason"):
                if instruction.get(name) is not None:
                    require_string(instruction[name], f"/instructions/{index}/{name}")
    return instructions, comment
