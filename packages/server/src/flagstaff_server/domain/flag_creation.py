"""A REST flag document from LaunchDarkly's `FeatureFlagBody` (`POST /api/v2/flags/{project}`):
unknown members refused at any depth, variations with ids, defaults, client-side availability,
custom properties and initial prerequisites (named by variation id), configured in every
environment. Pure: the caller passes `now_ms` and an id factory; error paths point into the body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flagstaff_server.domain.document import (
    Document,
    IdFactory,
    clone,
    field,
    pointer,
    refuse_unknown,
    require_bool,
    require_list,
    require_object,
    require_string,
    require_strings,
)
from flagstaff_server.domain.flag import flag_kind, new_environment_config
from flagstaff_server.domain.flag_validation import FlagLookup
from flagstaff_server.domain.validation import check_key
from flagstaff_server.errors import ValidationError

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
    key = check_key(body, "flag", strict=True)
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
