"""Metrics in LaunchDarkly's shapes (`MetricPost`, REST v2 `/metrics/{projectKey}`), pure: the
checked body of a create, and the same check after a JSON Patch. What a metric measures:

- a custom conversion metric (`isNumeric` false): whether a unit sent the event `eventKey` at
  least once after its exposure (0/1 per unit);
- a custom numeric metric (`isNumeric` true): the `metricValue`s a unit sent with `eventKey`,
  summed (`unitAggregationType` `sum`) or averaged (`average`) per unit;
- latency and error rate are these same metrics over events the application sends (a numeric
  `average` metric that is `LowerThanBaseline`; a conversion metric that is `LowerThanBaseline`);
- `pageview` and `click` metrics are kept in their shapes but only custom metrics have results
  (ingestion keeps custom events; browser goals are not tallied).

An exposed unit with no event counts as 0 / not converted (`eventDefault` {disabled false,
value 0}, LaunchDarkly's only supported default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import (
    Document,
    field,
    is_valid_context_kind,
    refuse_unknown,
    require_bool,
    require_list,
    require_object,
    require_string,
)
from flagstaff_server.domain.validation import check_key, check_name, check_tags, check_text
from flagstaff_server.errors import InvalidInput, ValidationError

KINDS = ("custom", "pageview", "click")
SUCCESS_CRITERIA = ("HigherThanBaseline", "LowerThanBaseline")
AGGREGATIONS = ("sum", "average")
URL_KINDS = ("exact", "canonical", "substring", "regex")
KNOWN = frozenset(
    {
        "key",
        "kind",
        "name",
        "description",
        "tags",
        "maintainerId",
        "isNumeric",
        "unit",
        "eventKey",
        "successCriteria",
        "selector",
        "urls",
        "randomizationUnits",
        "unitAggregationType",
        "analysisType",
        "percentileValue",
        "eventDefault",
        "dataSource",
        "filters",
    }
)
"""The fields of `MetricPost` (LaunchDarkly's spec v22)."""
STORED = KNOWN - {"dataSource", "filters"}
"""What is kept; `dataSource` and `filters` (warehouse metrics, event filters) are refused."""


@dataclass(frozen=True, slots=True)
class MetricDefinition:
    """What the analysis needs of a metric."""

    event_key: str
    numeric: bool
    aggregation: str
    """`sum` or `average` (numeric metrics); `sum` for a conversion metric."""
    higher_is_better: bool
    randomization_unit: str


def check_metric(body: Any) -> Document:
    """The stored fields of a metric from a `MetricPost` (or a patched representation), with
    LaunchDarkly's defaults filled in; a `ValidationError` names the first wrong field."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    given = {name: value for name, value in body.items() if value is not None}
    refuse_unknown(given, KNOWN, "")
    for unsupported in ("dataSource", "filters"):
        if unsupported in given:
            raise ValidationError(
                f"'{unsupported}' is not supported: metrics come from the ingested events",
                path=f"/{unsupported}",
            )
    key = check_key(given, "metric", strict=True)
    kind = field(given, "kind", "")
    if kind not in KINDS:
        raise ValidationError(f"'kind' must be one of {', '.join(KINDS)}", path="/kind")
    numeric = require_bool(given.get("isNumeric", False), "/isNumeric")
    doc: Document = {
        "key": key,
        "kind": kind,
        "name": check_name(given.get("name", key), "/name"),
        "description": check_text(given.get("description", ""), "/description"),
        "tags": sorted(set(check_tags(given.get("tags", []), "/tags"))),
        "isNumeric": numeric,
    }
    if "maintainerId" in given:
        doc["maintainerId"] = check_name(given["maintainerId"], "/maintainerId")
    if kind == "custom":
        event_key = require_string(field(given, "eventKey", ""), "/eventKey")
        if not 0 < len(event_key) <= 256:
            raise ValidationError("'eventKey' must have 1-256 characters", path="/eventKey")
        doc["eventKey"] = event_key
    elif "eventKey" in given:
        raise ValidationError("'eventKey' is for custom metrics only", path="/eventKey")
    if numeric and kind != "custom":
        raise ValidationError("only custom metrics can be numeric", path="/isNumeric")
    criteria = given.get("successCriteria")
    if criteria is None:
        if numeric:
            raise ValidationError(
                "a numeric metric needs 'successCriteria' (HigherThanBaseline or "
                "LowerThanBaseline)",
                path="/successCriteria",
            )
        criteria = "HigherThanBaseline"
    if criteria not in SUCCESS_CRITERIA:
        raise ValidationError(
            f"'successCriteria' must be one of {', '.join(SUCCESS_CRITERIA)}",
            path="/successCriteria",
        )
    doc["successCriteria"] = criteria
    if "unit" in given:
        if not numeric:
            raise ValidationError("'unit' is for numeric metrics only", path="/unit")
        doc["unit"] = check_name(given["unit"], "/unit")
    aggregation = given.get("unitAggregationType", "average" if numeric else "sum")
    if aggregation not in AGGREGATIONS:
        raise ValidationError(
            "'unitAggregationType' must be 'sum' or 'average'", path="/unitAggregationType"
        )
    if not numeric and aggregation != "sum":
        raise ValidationError(
            "a conversion metric counts each unit once: 'unitAggregationType' is 'sum'",
            path="/unitAggregationType",
        )
    doc["unitAggregationType"] = aggregation
    analysis = given.get("analysisType", "mean")
    if analysis != "mean":
        raise ValidationError(
            "'analysisType' must be 'mean' (percentile metrics are not supported)",
            path="/analysisType",
        )
    if "percentileValue" in given:
        raise ValidationError(
            "'percentileValue' is for percentile metrics, which are not supported",
            path="/percentileValue",
        )
    doc["analysisType"] = analysis
    doc["randomizationUnits"] = check_units(given.get("randomizationUnits", ["user"]))
    doc["eventDefault"] = check_event_default(given.get("eventDefault", {}))
    if kind == "click":
        doc["selector"] = check_text(field(given, "selector", ""), "/selector")
    elif "selector" in given:
        raise ValidationError("'selector' is for click metrics only", path="/selector")
    if kind in ("click", "pageview"):
        doc["urls"] = check_urls(field(given, "urls", ""))
    elif "urls" in given:
        raise ValidationError("'urls' is for click and pageview metrics only", path="/urls")
    return doc


def check_units(value: Any) -> list[str]:
    units = require_list(value, "/randomizationUnits")
    if not units:
        raise ValidationError("name at least one randomization unit", path="/randomizationUnits")
    for index, unit in enumerate(units):
        if not is_valid_context_kind(unit):
            raise ValidationError(
                f"invalid context kind {unit!r}", path=f"/randomizationUnits/{index}"
            )
    return list(dict.fromkeys(units))


def check_event_default(value: Any) -> dict[str, Any]:
    default = require_object(value, "/eventDefault")
    refuse_unknown(default, ("disabled", "value"), "/eventDefault")
    disabled = require_bool(default.get("disabled", False), "/eventDefault/disabled")
    if disabled:
        raise ValidationError(
            "units without events count as 0: 'disabled' true is not supported",
            path="/eventDefault/disabled",
        )
    if default.get("value", 0) != 0 or isinstance(default.get("value", 0), bool):
        raise ValidationError("only 0 is supported as the default", path="/eventDefault/value")
    return {"disabled": False, "value": 0}


def check_urls(value: Any) -> list[dict[str, Any]]:
    urls = require_list(value, "/urls")
    checked = []
    for index, item in enumerate(urls):
        at = f"/urls/{index}"
        url = require_object(item, at)
        refuse_unknown(url, ("kind", "url", "substring", "pattern"), at)
        if url.get("kind") not in URL_KINDS:
            raise ValidationError(
                f"'kind' must be one of {', '.join(URL_KINDS)}", path=f"{at}/kind"
            )
        member = {"exact": "url", "canonical": "url", "substring": "substring", "regex": "pattern"}
        name = member[url["kind"]]
        checked.append(
            {"kind": url["kind"], name: check_text(field(url, name, at), f"{at}/{name}")}
        )
    return checked


def definition(doc: Document) -> MetricDefinition:
    """What results need of a stored custom metric."""
    return MetricDefinition(
        event_key=str(doc["eventKey"]),
        numeric=bool(doc["isNumeric"]),
        aggregation=str(doc["unitAggregationType"]),
        higher_is_better=doc["successCriteria"] == "HigherThanBaseline",
        randomization_unit=str(doc["randomizationUnits"][0]),
    )
