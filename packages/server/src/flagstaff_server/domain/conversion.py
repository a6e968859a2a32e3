"""Conversion between REST documents and LaunchDarkly's SDK JSON (protocol §3.1/§3.2): a flag
document plus an environment key flattens into one SDK flag; an SDK flag or segment (from an
export of LaunchDarkly data) becomes a REST document. Pure; the SDK side is always complete.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import Document, IdFactory, clone, pointer
from flagstaff_server.domain.flag import flag_kind, same_variation_values
from flagstaff_server.errors import NotFound, ValidationError

SDK_FLAG_EXTRAS = ("samplingRatio", "excludeFromSummaries", "migration")
"""SDK fields LaunchDarkly's REST flag has no place for; kept in the environment config so an
import followed by an export gives the same data."""


def to_sdk_flag(document: Document, environment_key: str) -> dict[str, Any]:
    """The SDK flag JSON served to SDKs for one environment; `version` is the environment's.

    Disabled rules are left out: SDKs have no notion of them.
    """
    config = document.get("environments", {}).get(environment_key)
    if config is None:
        raise NotFound(
            f"flag {document.get('key')!r} has no environment {environment_key!r}",
            path=pointer("environments", environment_key),
        )
    availability = document.get("clientSideAvailability") or {}
    using_environment_id = bool(
        availability.get("usingEnvironmentId", document.get("includeInSnippet", False))
    )
    flag: dict[str, Any] = {
        "key": document["key"],
        "version": config.get("version", 1),
        "on": bool(config.get("on", False)),
        "deleted": False,
        "variations": [
            clone(variation.get("value")) for variation in document.get("variations", [])
        ],
        "offVariation": config.get("offVariation"),
        "fallthrough": _sdk_variation_or_rollout(config.get("fallthrough") or {}),
        "prerequisites": [
            {"key": item["key"], "variation": item["variation"]}
            for item in config.get("prerequisites", [])
        ],
        "targets": [
            {"variation": target["variation"], "values": list(target.get("values", []))}
            for target in config.get("targets", [])
        ],
        "contextTargets": [
            {
                "contextKind": target.get("contextKind", "user"),
                "variation": target["variation"],
                "values": list(target.get("values", [])),
            }
            for target in config.get("contextTargets", [])
        ],
        "rules": [_sdk_rule(rule) for rule in config.get("rules", []) if not rule.get("disabled")],
        "salt": config.get("salt", ""),
        "trackEvents": bool(config.get("trackEvents", False)),
        "trackEventsFallthrough": bool(config.get("trackEventsFallthrough", False)),
        "debugEventsUntilDate": config.get("_debugEventsUntilDate"),
        "clientSide": using_environment_id,
        "clientSideAvailability": {
            "usingMobileKey": bool(availability.get("usingMobileKey", True)),
            "usingEnvironmentId": using_environment_id,
        },
    }
    for name in SDK_FLAG_EXTRAS:
        if config.get(name) is not None:
            flag[name] = clone(config[name])
    return flag


def _sdk_rule(rule: dict[str, Any]) -> dict[str, Any]:
    sdk_rule: dict[str, Any] = {
        "id": rule.get("_id", ""),
        "clauses": [sdk_clause(clause) for clause in rule.get("clauses", [])],
        "trackEvents": bool(rule.get("trackEvents", False)),
    }
    sdk_rule.update(_sdk_variation_or_rollout(rule))
    return sdk_rule


def sdk_clause(clause: dict[str, Any]) -> dict[str, Any]:
    """A REST clause in SDK form: no `_id`, `negate` always present."""
    result: dict[str, Any] = {
        "attribute": clause.get("attribute", ""),
        "op": clause["op"],
        "values": clone(clause.get("values", [])),
        "negate": bool(clause.get("negate", False)),
    }
    if clause.get("contextKind") is not None:
        result["contextKind"] = clause["contextKind"]
    return result


def _sdk_variation_or_rollout(holder: dict[str, Any]) -> dict[str, Any]:
    if holder.get("rollout") is not None:
        return {"rollout": _sdk_rollout(holder["rollout"])}
    if holder.get("variation") is not None:
        return {"variation": holder["variation"]}
    return {}


def _sdk_rollout(rollout: dict[str, Any]) -> dict[str, Any]:
    kind = rollout.get("kind") or (
        "experiment" if rollout.get("experimentAllocation") else "rollout"
    )
    result: dict[str, Any] = {"kind": kind, "variations": []}
    for item in rollout.get("variations", []):
        weighted: dict[str, Any] = {"variation": item["variation"], "weight": item["weight"]}
        if item.get("_untracked") is not None:
            weighted["untracked"] = item["_untracked"]
        result["variations"].append(weighted)
    for name in ("bucketBy", "contextKind", "seed"):
        if rollout.get(name) is not None:
            result[name] = rollout[name]
    return result


def flag_document_from_sdk(
    sdk_flag: dict[str, Any],
    *,
    environment_key: str,
    environment_name: str,
    now_ms: int,
    new_id: IdFactory,
    key: str | None = None,
    name: str | None = None,
) -> Document:
    """A REST flag document configured in one environment from an SDK flag (an import).

    Variations get fresh `_id`s; `key` fills in a flag that lacks one (LaunchDarkly's data files
    key flags by map key). Other environments are added with `flag.add_environment_to_flag`.
    """
    flag_key = sdk_flag.get("key") or key
    if not isinstance(flag_key, str):
        raise ValidationError("an imported flag needs a key", path="/key")
    values = sdk_flag.get("variations") or []
    if not isinstance(values, list):
        raise ValidationError("'variations' must be an array", path="/variations")
    variations = [{"_id": new_id(), "value": clone(value)} for value in values]
    last = max(len(variations) - 1, 0)
    availability = sdk_flag.get("clientSideAvailability") or {
        "usingMobileKey": True,
        "usingEnvironmentId": bool(sdk_flag.get("clientSide", False)),
    }
    document: Document = {
        "key": flag_key,
        "name": name or flag_key,
        "kind": flag_kind(variations),
        "description": "",
        "_version": 1,
        "creationDate": now_ms,
        "variations": variations,
        "temporary": False,
        "tags": [],
        "archived": False,
        "deprecated": False,
        "defaults": {"onVariation": 0, "offVariation": min(1, last)},
        "clientSideAvailability": {
            "usingMobileKey": bool(availability.get("usingMobileKey", True)),
            "usingEnvironmentId": bool(availability.get("usingEnvironmentId", False)),
        },
        "includeInSnippet": bool(availability.get("usingEnvironmentId", False)),
        "customProperties": {},
        "experiments": {"baselineIdx": 0, "items": []},
        "environments": {},
    }
    document["environments"][environment_key] = environment_config_from_sdk(
        sdk_flag, environment_name=environment_name, now_ms=now_ms, new_id=new_id
    )
    return document


def merge_sdk_flag(
    document: Document,
    sdk_flag: dict[str, Any],
    *,
    environment_key: str,
    environment_name: str,
    now_ms: int,
    new_id: IdFactory,
) -> Document:
    """A copy of an existing flag whose configuration in one environment is replaced by an SDK
    flag's (an import into a project that already has the flag). The variations must agree."""
    values = [variation.get("value") for variation in document.get("variations", [])]
    if not same_variation_values(values, sdk_flag.get("variations") or []):
        raise ValidationError(
            f"flag {document.get('key')!r} already exists with different variations",
            path="/variations",
        )
    result: Document = clone(document)
    config = environment_config_from_sdk(
        sdk_flag, environment_name=environment_name, now_ms=now_ms, new_id=new_id
    )
    previous = result.get("environments", {}).get(environment_key)
    if previous is not None:
        config["version"] = previous.get("version", 1)
        config["sel"] = previous.get("sel", config["sel"])
    result.setdefault("environments", {})[environment_key] = config
    return result


def environment_config_from_sdk(
    sdk_flag: dict[str, Any], *, environment_name: str, now_ms: int, new_id: IdFactory
) -> dict[str, Any]:
    """The REST per-environment configuration equivalent to an SDK flag."""
    config: dict[str, Any] = {
        "on": sdk_flag.get("on", False),
        "archived": False,
        # an absent salt is "" to SDKs, and bucketing must not move on import
        "salt": _string(sdk_flag.get("salt")),
        "sel": new_id().replace("-", ""),
        "lastModified": now_ms,
        "version": max(_int(sdk_flag.get("version")), 1),
        "targets": [
            {"values": clone(target.get("values", [])), "variation": target.get("variation")}
            for target in sdk_flag.get("targets") or []
        ],
        "contextTargets": [
            {
                "contextKind": target.get("contextKind") or "user",
                "values": clone(target.get("values", [])),
                "variation": target.get("variation"),
            }
            for target in sdk_flag.get("contextTargets") or []
        ],
        "rules": [_rest_rule(rule, new_id) for rule in sdk_flag.get("rules") or []],
        "fallthrough": _rest_variation_or_rollout(sdk_flag.get("fallthrough") or {}),
        "offVariation": sdk_flag.get("offVariation"),
        "prerequisites": clone(sdk_flag.get("prerequisites") or []),
        "trackEvents": bool(sdk_flag.get("trackEvents", False)),
        "trackEventsFallthrough": bool(sdk_flag.get("trackEventsFallthrough", False)),
        "_environmentName": environment_name,
    }
    if sdk_flag.get("debugEventsUntilDate") is not None:
        config["_debugEventsUntilDate"] = sdk_flag["debugEventsUntilDate"]
    for name in SDK_FLAG_EXTRAS:
        if sdk_flag.get(name) is not None:
            config[name] = clone(sdk_flag[name])
    return config


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _rest_rule(rule: dict[str, Any], new_id: IdFactory) -> dict[str, Any]:
    result: dict[str, Any] = {
        "_id": rule.get("id") or new_id(),
        "clauses": [rest_clause(clause, new_id) for clause in rule.get("clauses") or []],
        "trackEvents": bool(rule.get("trackEvents", False)),
    }
    result.update(_rest_variation_or_rollout(rule))
    return result


def rest_clause(clause: dict[str, Any], new_id: IdFactory) -> dict[str, Any]:
    """An SDK clause in REST form, with a fresh `_id`."""
    result: dict[str, Any] = {
        "_id": new_id(),
        "attribute": clause.get("attribute", ""),
        "op": clause.get("op", ""),
        "values": clone(clause.get("values") or []),
        "negate": bool(clause.get("negate", False)),
    }
    if clause.get("contextKind") is not None:
        result["contextKind"] = clause["contextKind"]
    return result


def _rest_variation_or_rollout(holder: dict[str, Any]) -> dict[str, Any]:
    rollout = holder.get("rollout")
    if rollout is not None:
        result: dict[str, Any] = {"variations": []}
        for item in rollout.get("variations") or []:
            weighted = {"variation": item.get("variation"), "weight": item.get("weight")}
            if item.get("untracked") is not None:
                weighted["_untracked"] = item["untracked"]
            result["variations"].append(weighted)
        for name in ("bucketBy", "contextKind", "seed"):
            if rollout.get(name) is not None:
                result[name] = rollout[name]
        if rollout.get("kind") is not None:
            result["kind"] = rollout["kind"]
        return {"rollout": result}
    if holder.get("variation") is not None:
        return {"variation": holder["variation"]}
    return {}


def to_sdk_segment(document: Document) -> dict[str, Any]:
    """The SDK segment JSON for a REST segment document (complete, every field present)."""
    segment: dict[str, Any] = {
        "key": document["key"],
        "version": document.get("version", 1),
        "deleted": False,
        "included": list(document.get("included", [])),
        "excluded": list(document.get("excluded", [])),
        "includedContexts": clone(document.get("includedContexts", [])),
        "excludedContexts": clone(document.get("excludedContexts", [])),
        "rules": [_sdk_segment_rule(rule) for rule in document.get("rules", [])],
        "salt": document.get("salt", ""),
        "unbounded": bool(document.get("unbounded", False)),
    }
    if document.get("unboundedContextKind") is not None:
        segment["unboundedContextKind"] = document["unboundedContextKind"]
    if document.get("unbounded") and document.get("generation") is not None:
        segment["generation"] = document["generation"]
    return segment


def _sdk_segment_rule(rule: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": rule.get("_id", ""),
        "clauses": [sdk_clause(clause) for clause in rule.get("clauses", [])],
    }
    for name in ("weight", "bucketBy", "rolloutContextKind"):
        if rule.get(name) is not None:
            result[name] = rule[name]
    return result


def segment_document_from_sdk(
    sdk_segment: dict[str, Any],
    *,
    now_ms: int,
    new_id: IdFactory,
    key: str | None = None,
    name: str | None = None,
) -> Document:
    """A REST segment document from an SDK segment (an import); rules and clauses get `_id`s."""
    segment_key = sdk_segment.get("key") or key
    if not isinstance(segment_key, str):
        raise ValidationError("an imported segment needs a key", path="/key")
    document: Document = {
        "key": segment_key,
        "name": name or segment_key,
        "description": "",
        "tags": [],
        "creationDate": now_ms,
        "lastModifiedDate": now_ms,
        "included": clone(sdk_segment.get("included") or []),
        "excluded": clone(sdk_segment.get("excluded") or []),
        "includedContexts": clone(sdk_segment.get("includedContexts") or []),
        "excludedContexts": clone(sdk_segment.get("excludedContexts") or []),
        "rules": [],
        "version": max(_int(sdk_segment.get("version")), 1),
        "deleted": False,
        "salt": _string(sdk_segment.get("salt")),
        "unbounded": bool(sdk_segment.get("unbounded", False)),
    }
    if sdk_segment.get("generation") is not None:
        document["generation"] = sdk_segment["generation"]
    if sdk_segment.get("unboundedContextKind") is not None:
        document["unboundedContextKind"] = sdk_segment["unboundedContextKind"]
    for rule in sdk_segment.get("rules") or []:
        rest_rule: dict[str, Any] = {
            "_id": rule.get("id") or new_id(),
            "clauses": [rest_clause(clause, new_id) for clause in rule.get("clauses") or []],
        }
        for name_ in ("weight", "bucketBy", "rolloutContextKind"):
            if rule.get(name_) is not None:
                rest_rule[name_] = rule[name_]
        document["rules"].append(rest_rule)
    return document
