"""The REST flag document's life outside semantic patch: creation from a `FeatureFlagBody`, the
per-environment configuration every environment gets, JSON Patch and Merge Patch with read-only
fields guarded, id filling, and the response decoration (`_links`, `_site`, `_summary`).
Pure: the caller passes `now_ms` and an id factory; `validation` checks the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from flagstaff_server.domain.document import (
    Document,
    IdFactory,
    clone,
    field,
    is_valid_key,
    json_equal,
    pointer,
    refuse_unknown,
    require_bool,
    require_list,
    require_object,
    require_string,
    require_strings,
)
from flagstaff_server.domain.flag_validation import FlagLookup
from flagstaff_server.domain.json_patch import apply_json_patch, apply_merge_patch, parse_pointer
from flagstaff_server.errors import AlreadyExists, NotFound, ValidationError

READ_ONLY_FIELDS = frozenset({"key", "_version", "creationDate", "kind", "environments"})
"""Top-level members a patch may test but not change (plus every member starting with '_')."""

READ_ONLY_ENVIRONMENT_FIELDS = frozenset(
    {"version", "lastModified", "salt", "sel", "_site", "_environmentName", "_summary"}
)
WRITABLE_UNDERSCORE_ENVIRONMENT_FIELDS = frozenset({"_debugEventsUntilDate"})

# The members of LaunchDarkly's `FeatureFlagBody` and the objects in it; anything else in a create
# body is refused (a misspelt field must not be dropped silently). `purpose`, `migrationSettings`,
# `maintainerTeamKey` and a variation's `_id` and `valueHash` are LaunchDarkly's and ignored here.
BODY_FIELDS = frozenset(
    {
        "name",
        "key",
        "description",
        "includeInSnippet",
        "clientSideAvailability",
        "variations",
        "temporary",
        "tags",
        "customProperties",
        "defaults",
        "purpose",
        "migrationSettings",
        "maintainerId",
        "maintainerTeamKey",
        "initialPrerequisites",
        "isFlagOn",
    }
)
BODY_VARIATION_FIELDS = frozenset({"_id", "value", "valueHash", "name", "description"})
BODY_DEFAULTS_FIELDS = frozenset({"onVariation", "offVariation"})
BODY_AVAILABILITY_FIELDS = frozenset({"usingMobileKey", "usingEnvironmentId"})
BODY_CUSTOM_PROPERTY_FIELDS = frozenset({"name", "value"})
BODY_PREREQUISITE_FIELDS = frozenset({"key", "variationId"})


def flag_kind(variations: Sequence[Any]) -> str:
    """'boolean' for the true/false pair, 'multivariate' for anything else."""
    values = [
        variation.get("value") if isinstance(variation, dict) else None for variation in variations
    ]
    is_pair = len(values) == 2 and all(isinstance(value, bool) for value in values)
    return "boolean" if is_pair and values[0] is not values[1] else "multivariate"


def new_flag_document(
    body: Any,
    environments: Sequence[tuple[str, str]],
    *,
    now_ms: int,
    new_id: IdFactory,
    flag_lookup: FlagLookup | None = None,
) -> Document:
    """A flag document from a LaunchDarkly `FeatureFlagBody`, configured in every environment.

    `environments` is `(key, name)` pairs. Error paths point into the request body.
    """
    body = require_object(body, "")
    refuse_unknown(body, BODY_FIELDS, "")
    key = require_string(field(body, "key", ""), "/key")
    if not is_valid_key(key):
        raise ValidationError(
            f"invalid flag key {key!r}: use 1-256 letters, digits, '.', '_' or '-'", path="/key"
        )
    name = require_string(field(body, "name", ""), "/name")
    variations = _body_variations(body, new_id)
    if not variations:
        raise ValidationError("a flag needs at least one variation", path="/variations")
    defaults = _body_defaults(body, variations)
    availability = _body_availability(body)
    document: Document = {
        "key": key,
        "name": name,
        "kind": flag_kind(variations),
        "description": require_string(body.get("description") or "", "/description"),
        "_version": 1,
        "creationDate": now_ms,
        "variations": variations,
        "temporary": require_bool(body.get("temporary", True), "/temporary"),
        "tags": sorted(set(require_strings(body.get("tags") or [], "/tags"))),
        "archived": False,
        "deprecated": False,
        "defaults": defaults,
        "clientSideAvailability": availability,
        "includeInSnippet": availability["usingEnvironmentId"],
        "customProperties": _body_custom_properties(body),
        "experiments": {"baselineIdx": 0, "items": []},
        "environments": {},
    }
    if body.get("maintainerId") is not None:
        document["maintainerId"] = require_string(body["maintainerId"], "/maintainerId")
    is_on = require_bool(body.get("isFlagOn", False), "/isFlagOn")
    prerequisites = _initial_prerequisites(body, key, flag_lookup)
    for env_key, env_name in environments:
        config = new_environment_config(document, env_name, now_ms=now_ms, new_id=new_id)
        config["on"] = is_on
        config["prerequisites"] = clone(prerequisites)
        document["environments"][env_key] = config
    return document


def _body_variations(body: dict[str, Any], new_id: IdFactory) -> list[dict[str, Any]]:
    if body.get("variations") is None:
        return [{"_id": new_id(), "value": True}, {"_id": new_id(), "value": False}]
    variations: list[dict[str, Any]] = []
    for index, given in enumerate(require_list(body["variations"], "/variations")):
        path = f"/variations/{index}"
        given = require_object(given, path)
        refuse_unknown(given, BODY_VARIATION_FIELDS, path)
        variation: dict[str, Any] = {"_id": new_id(), "value": clone(field(given, "value", path))}
        for name in ("name", "description"):
            if given.get(name) is not None:
                variation[name] = require_string(given[name], f"{path}/{name}")
        variations.append(variation)
    return variations


def _body_defaults(body: dict[str, Any], variations: list[dict[str, Any]]) -> dict[str, int]:
    last = max(len(variations) - 1, 0)
    if body.get("defaults") is None:
        return {"onVariation": 0, "offVariation": min(1, last)}
    given = require_object(body["defaults"], "/defaults")
    refuse_unknown(given, BODY_DEFAULTS_FIELDS, "/defaults")
    defaults: dict[str, int] = {}
    for name in ("onVariation", "offVariation"):
        value = field(given, name, "/defaults")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= last:
            raise ValidationError(
                f"defaults.{name} must be a variation index (0..{last})", path=f"/defaults/{name}"
            )
        defaults[name] = value
    return defaults


def _body_availability(body: dict[str, Any]) -> dict[str, bool]:
    given = body.get("clientSideAvailability")
    if given is None:
        snippet = require_bool(body.get("includeInSnippet", False), "/includeInSnippet")
        return {"usingMobileKey": True, "usingEnvironmentId": snippet}
    given = require_object(given, "/clientSideAvailability")
    refuse_unknown(given, BODY_AVAILABILITY_FIELDS, "/clientSideAvailability")
    return {
        "usingMobileKey": require_bool(
            given.get("usingMobileKey", True), "/clientSideAvailability/usingMobileKey"
        ),
        "usingEnvironmentId": require_bool(
            given.get("usingEnvironmentId", False), "/clientSideAvailability/usingEnvironmentId"
        ),
    }


def _body_custom_properties(body: dict[str, Any]) -> dict[str, Any]:
    properties = require_object(body.get("customProperties") or {}, "/customProperties")
    for key, given in properties.items():
        path = pointer("customProperties", key)
        refuse_unknown(require_object(given, path), BODY_CUSTOM_PROPERTY_FIELDS, path)
    copied: dict[str, Any] = clone(properties)
    return copied


def _initial_prerequisites(
    body: dict[str, Any], key: str, flag_lookup: FlagLookup | None
) -> list[dict[str, Any]]:
    prerequisites: list[dict[str, Any]] = []
    for index, given in enumerate(
        require_list(body.get("initialPrerequisites") or [], "/initialPrerequisites")
    ):
        path = f"/initialPrerequisites/{index}"
        given = require_object(given, path)
        refuse_unknown(given, BODY_PREREQUISITE_FIELDS, path)
        prerequisite_key = require_string(field(given, "key", path), f"{path}/key")
        variation_id = require_string(field(given, "variationId", path), f"{path}/variationId")
        if prerequisite_key == key:
            raise ValidationError("a flag cannot be its own prerequisite", path=f"{path}/key")
        variation = resolve_prerequisite(prerequisite_key, variation_id, flag_lookup, path)
        prerequisites.append({"key": prerequisite_key, "variation": variation})
    return prerequisites


def resolve_prerequisite(
    key: str, variation_id: str, flag_lookup: FlagLookup | None, path: str
) -> int:
    """The variation index of `variation_id` in prerequisite flag `key`."""
    other = flag_lookup(key) if flag_lookup is not None else None
    if other is None:
        raise ValidationError(f"prerequisite flag {key!r} does not exist", path=f"{path}/key")
    for index, variation in enumerate(other.get("variations", [])):
        if variation.get("_id") == variation_id:
            return index
    raise ValidationError(
        f"flag {key!r} has no variation with id {variation_id!r}", path=f"{path}/variationId"
    )


def new_environment_config(
    document: Document, environment_name: str, *, now_ms: int, new_id: IdFactory
) -> dict[str, Any]:
    """The configuration a flag gets in a new environment: off, serving the flag's defaults."""
    defaults = document.get("defaults") or {"onVariation": 0, "offVariation": 0}
    return {
        "on": False,
        "archived": bool(document.get("archived", False)),
        "salt": new_id().replace("-", ""),
        "sel": new_id().replace("-", ""),
        "lastModified": now_ms,
        "version": 1,
        "targets": [],
        "contextTargets": [],
        "rules": [],
        "fallthrough": {"variation": defaults["onVariation"]},
        "offVariation": defaults["offVariation"],
        "prerequisites": [],
        "trackEvents": False,
        "trackEventsFallthrough": False,
        "_environmentName": environment_name,
    }


def add_environment_to_flag(
    document: Document,
    environment_key: str,
    environment_name: str,
    *,
    now_ms: int,
    new_id: IdFactory,
) -> Document:
    """A copy of the flag with a default configuration for a newly created environment."""
    if environment_key in document.get("environments", {}):
        raise AlreadyExists(
            f"flag {document.get('key')!r} already has environment {environment_key!r}",
            path=pointer("environments", environment_key),
        )
    result: Document = clone(document)
    result.setdefault("environments", {})[environment_key] = new_environment_config(
        result, environment_name, now_ms=now_ms, new_id=new_id
    )
    return result


def remove_environment_from_flag(document: Document, environment_key: str) -> Document:
    """A copy of the flag without the configuration of a deleted environment."""
    if environment_key not in document.get("environments", {}):
        raise NotFound(
            f"flag {document.get('key')!r} has no environment {environment_key!r}",
            path=pointer("environments", environment_key),
        )
    result: Document = clone(document)
    del result["environments"][environment_key]
    return result


def fill_flag_ids(document: Document, *, new_id: IdFactory) -> Document:
    """Give variations, rules and clauses lacking an `_id` a fresh one, and fill the defaults
    LaunchDarkly fills (`negate`, `trackEvents`, empty lists), so that JSON Patch may add a rule
    the way the REST API documents it. Leaves wrongly typed parts for validation to report."""
    result: Document = clone(document)
    variations = result.get("variations")
    if isinstance(variations, list):
        for variation in variations:
            if isinstance(variation, dict) and not variation.get("_id"):
                variation["_id"] = new_id()
        result["kind"] = flag_kind(variations)
    environments = result.get("environments")
    if isinstance(environments, dict):
        for config in environments.values():
            if isinstance(config, dict):
                _fill_environment(config, new_id)
    return result


def _fill_environment(config: dict[str, Any], new_id: IdFactory) -> None:
    for name in ("targets", "contextTargets", "rules", "prerequisites"):
        config.setdefault(name, [])
    for name in ("trackEvents", "trackEventsFallthrough", "archived"):
        config.setdefault(name, False)
    if isinstance(config["rules"], list):
        for rule in config["rules"]:
            if isinstance(rule, dict):
                if not rule.get("_id"):
                    rule["_id"] = new_id()
                rule.setdefault("trackEvents", False)
                fill_clause_ids(rule.get("clauses"), new_id)


def fill_clause_ids(clauses: Any, new_id: IdFactory) -> None:
    if isinstance(clauses, list):
        for clause in clauses:
            if isinstance(clause, dict):
                if not clause.get("_id"):
                    clause["_id"] = new_id()
                clause.setdefault("negate", False)


def apply_flag_json_patch(
    document: Document, operations: list[dict[str, Any]], *, new_id: IdFactory
) -> Document:
    """JSON Patch on a flag: read-only fields may be tested but not changed; all-or-nothing."""
    for index, operation in enumerate(operations):
        op = operation.get("op") if isinstance(operation, dict) else None
        if op == "test":
            continue
        # reading from a read-only member (copy) is fine; moving it away is not
        for member in ("path", "from") if op == "move" else ("path",):
            text = operation.get(member) if isinstance(operation, dict) else None
            if isinstance(text, str):
                _check_writable_flag_path(parse_pointer(text, at=f"/{index}/{member}"), index, text)
    patched = apply_json_patch(document, operations)
    return fill_flag_ids(_restore_flag_bookkeeping(document, patched), new_id=new_id)


def apply_flag_merge_patch(
    document: Document, merge: dict[str, Any], *, new_id: IdFactory
) -> Document:
    """JSON Merge Patch on a flag; read-only members may not appear in the patch."""
    _check_merge_writable(merge, [], READ_ONLY_FIELDS)
    environments = merge.get("environments")
    if isinstance(environments, dict):
        for env_key, config in environments.items():
            if env_key not in document.get("environments", {}) or not isinstance(config, dict):
                raise ValidationError(
                    "environments are added and removed with the environment API",
                    path=pointer("environments", env_key),
                )
            _check_merge_writable(config, ["environments", env_key], READ_ONLY_ENVIRONMENT_FIELDS)
    patched = apply_merge_patch(document, merge)
    return fill_flag_ids(_restore_flag_bookkeeping(document, patched), new_id=new_id)


def _check_merge_writable(patch: dict[str, Any], at: list[str], read_only: frozenset[str]) -> None:
    for name in patch:
        if name == "environments" and not at:
            continue
        if name in read_only or (
            name.startswith("_") and name not in WRITABLE_UNDERSCORE_ENVIRONMENT_FIELDS
        ):
            raise ValidationError(f"'{name}' is read-only", path=pointer(*at, name))


def _check_writable_flag_path(tokens: list[str], index: int, text: str) -> None:
    def refuse(reason: str) -> None:
        raise ValidationError(f"patch operation {index}: {text or '/'} {reason}", path=text)

    if not tokens:
        refuse("would replace the whole flag")
    top = tokens[0]
    if top != "environments" and (top in READ_ONLY_FIELDS or top.startswith("_")):
        refuse("is read-only")
    if top == "environments":
        if len(tokens) < 3:
            refuse("is read-only: environments are added and removed with the environment API")
        name = tokens[2]
        if name in READ_ONLY_ENVIRONMENT_FIELDS or (
            name.startswith("_") and name not in WRITABLE_UNDERSCORE_ENVIRONMENT_FIELDS
        ):
            refuse("is read-only")


def _restore_flag_bookkeeping(before: Document, after: Document) -> Document:
    for name in ("key", "_version", "creationDate"):
        if name in before:
            after[name] = before[name]
    environments = after.get("environments")
    if (
        not isinstance(environments, dict)
        or environments.keys() != before.get("environments", {}).keys()
    ):
        raise ValidationError(
            "environments are added and removed with the environment API", path="/environments"
        )
    for env_key, config in environments.items():
        if not isinstance(config, dict):
            continue
        for name in READ_ONLY_ENVIRONMENT_FIELDS:
            if name in before["environments"][env_key]:
                config[name] = before["environments"][env_key][name]
    return after


def present_flag(
    document: Document, *, project_key: str, environment_keys: Iterable[str] | None = None
) -> Document:
    """The flag as the REST API answers it: links, per-environment `_site` and `_summary`.

    `environment_keys` limits the environments shown (LaunchDarkly's `env` query parameter).
    """
    result: Document = clone(document)
    key = result["key"]
    result["_links"] = {
        "self": {"href": f"/api/v2/flags/{project_key}/{key}", "type": "application/json"},
        "parent": {"href": f"/api/v2/flags/{project_key}", "type": "application/json"},
    }
    result.setdefault("customProperties", {})
    result.setdefault("experiments", {"baselineIdx": 0, "items": []})
    result.setdefault("archived", False)
    result.setdefault("deprecated", False)
    environments = result.get("environments", {})
    if environment_keys is not None:
        wanted = set(environment_keys)
        environments = {k: v for k, v in environments.items() if k in wanted}
        result["environments"] = environments
    for env_key, config in environments.items():
        config["_site"] = {"href": f"/{project_key}/{env_key}/features/{key}", "type": "text/html"}
        config["_summary"] = summarize_environment(config, len(result.get("variations", [])))
        config.setdefault("_environmentName", env_key)
    return result


def summarize_environment(config: dict[str, Any], variation_count: int) -> dict[str, Any]:
    """LaunchDarkly's `_summary`: per variation, how many rules and targets serve it."""
    variations: dict[str, dict[str, Any]] = {
        str(index): {"rules": 0, "nullRules": 0, "targets": 0, "contextTargets": 0}
        for index in range(variation_count)
    }
    for rule in config.get("rules", []):
        entry = variations.get(str(rule.get("variation")))
        if entry is not None:
            entry["rules"] += 1
            if not rule.get("clauses"):
                entry["nullRules"] += 1
    for name in ("targets", "contextTargets"):
        for target in config.get(name, []):
            entry = variations.get(str(target.get("variation")))
            if entry is not None:
                entry[name] += len(target.get("values", []))
    fallthrough = variations.get(str((config.get("fallthrough") or {}).get("variation")))
    if fallthrough is not None:
        fallthrough["isFallthrough"] = True
    off = variations.get(str(config.get("offVariation")))
    if off is not None:
        off["isOff"] = True
    return {"variations": variations, "prerequisites": len(config.get("prerequisites", []))}


def same_variation_values(left: Sequence[Any], right: Sequence[Any]) -> bool:
    return len(left) == len(right) and all(map(json_equal, left, right))
