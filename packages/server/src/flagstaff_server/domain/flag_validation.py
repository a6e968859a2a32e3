"""Validation of REST flag documents; the first problem raises `ValidationError` with the JSON
pointer of the offending value. Strict mode (every edit) also checks meaning: variation indices,
weights, duplicate targets, prerequisites (existing flags, their variations, no cycle through
this flag when a `FlagLookup` is given). Lenient mode (imports of LaunchDarkly data, which may be
deliberately malformed) checks only the JSON types the SDK decoders insist on. Reads nothing but
its arguments (and the lookup).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flagstaff_server.domain.clause_validation import validate_rule_clauses
from flagstaff_server.domain.document import (
    NAME_MAX_LENGTH,
    Document,
    field,
    is_valid_context_kind,
    json_equal,
    pointer,
    require_bool,
    require_int,
    require_list,
    require_object,
    require_string,
    require_strings,
)
from flagstaff_server.domain.validation import (
    TOTAL_WEIGHT,
    check_document_depth,
    check_key,
    check_name,
    check_optional,
    check_tags,
    check_text,
    check_value_depth,
    is_attribute_reference,
)
from flagstaff_server.errors import ValidationError

FlagLookup = Callable[[str], Document | None]
"""Finds another flag of the same project by key (for prerequisites); None when absent."""


def validate_flag_document(
    document: Document, *, strict: bool = True, flag_lookup: FlagLookup | None = None
) -> None:
    """Raise `ValidationError` (with `path`) for the first problem in a REST flag document.

    `flag_lookup` lets strict mode check that prerequisites name existing flags and valid
    variation indices of those flags; without it only their shape is checked.
    """
    _FlagValidator(document, strict=strict, flag_lookup=flag_lookup).validate()


class _FlagValidator:
    def __init__(self, document: Document, *, strict: bool, flag_lookup: FlagLookup | None):
        self.document = document
        self.strict = strict
        self.flag_lookup = flag_lookup
        self.variation_count = 0
        self.key = ""
        self.environment_key = ""

    def validate(self) -> None:
        document = require_object(self.document, "")
        self.key = check_key(document, "flag", strict=self.strict)
        name = check_name(field(document, "name", ""), "/name")
        if self.strict and name.strip() == "":
            raise ValidationError("a flag needs a non-empty name", path="/name")
        self._validate_variations(document)
        for name, check in (
            ("description", check_text),
            ("maintainerId", check_name),
            ("temporary", require_bool),
            ("archived", require_bool),
            ("deprecated", require_bool),
            ("tags", check_tags),
            ("_version", require_int),
            ("creationDate", require_int),
            ("includeInSnippet", require_bool),
        ):
            check_optional(document, name, check, "")
        if document.get("kind") not in (None, "boolean", "multivariate"):
            raise ValidationError("'kind' must be 'boolean' or 'multivariate'", path="/kind")
        self._validate_defaults(document)
        self._validate_availability(document)
        self._validate_custom_properties(document)
        environments = require_object(document.get("environments", {}), "/environments")
        for env_key, config in environments.items():
            self.environment_key = env_key
            self._validate_environment(config, pointer("environments", env_key))
        check_document_depth(document)

    def _validate_variations(self, document: Document) -> None:
        variations = require_list(field(document, "variations", ""), "/variations")
        if self.strict and not variations:
            raise ValidationError("a flag needs at least one variation", path="/variations")
        ids: set[str] = set()
        for index, variation in enumerate(variations):
            path = f"/variations/{index}"
            variation = require_object(variation, path)
            check_value_depth(field(variation, "value", path), f"{path}/value")
            check_optional(variation, "name", check_name, path)
            check_optional(variation, "description", check_text, path)
            if "_id" in variation:
                variation_id = require_string(variation["_id"], f"{path}/_id")
                if variation_id in ids:
                    raise ValidationError(
                        f"duplicate variation id {variation_id!r}", path=f"{path}/_id"
                    )
                ids.add(variation_id)
            if self.strict:
                for earlier in range(index):
                    if json_equal(variations[earlier].get("value"), variation["value"]):
                        raise ValidationError(
                            f"variation values must be unique: {index} repeats {earlier}",
                            path=f"{path}/value",
                        )
        self.variation_count = len(variations)

    def _variation(self, value: Any, path: str) -> int:
        index = require_int(value, path)
        if self.strict and not 0 <= index < self.variation_count:
            raise ValidationError(
                f"variation index {index} is out of range (the flag has {self.variation_count})",
                path=path,
            )
        return index

    def _validate_defaults(self, document: Document) -> None:
        if document.get("defaults") is None:
            return
        defaults = require_object(document["defaults"], "/defaults")
        for name in ("onVariation", "offVariation"):
            self._variation(field(defaults, name, "/defaults"), f"/defaults/{name}")

    def _validate_availability(self, document: Document) -> None:
        if document.get("clientSideAvailability") is None:
            return
        availability = require_object(document["clientSideAvailability"], "/clientSideAvailability")
        for name in ("usingMobileKey", "usingEnvironmentId"):
            check_optional(availability, name, require_bool, "/clientSideAvailability")

    def _validate_custom_properties(self, document: Document) -> None:
        if document.get("customProperties") is None:
            return
        properties = require_object(document["customProperties"], "/customProperties")
        for key, prop in properties.items():
            path = pointer("customProperties", key)
            if len(key) > NAME_MAX_LENGTH:
                raise ValidationError(
                    f"a custom property key may have at most {NAME_MAX_LENGTH} characters",
                    path=path,
                )
            prop = require_object(prop, path)
            check_name(field(prop, "name", path), f"{path}/name")
            values = require_strings(field(prop, "value", path), f"{path}/value")
            for index, value in enumerate(values):
                check_text(value, f"{path}/value/{index}")

    def _validate_environment(self, config: Any, path: str) -> None:
        config = require_object(config, path)
        require_bool(field(config, "on", path), f"{path}/on")
        for name, check in (
            ("archived", require_bool),
            ("salt", require_string),
            ("version", require_int),
            ("lastModified", require_int),
            ("trackEvents", require_bool),
            ("trackEventsFallthrough", require_bool),
            ("_debugEventsUntilDate", require_int),
            ("samplingRatio", require_int),
            ("excludeFromSummaries", require_bool),
        ):
            check_optional(config, name, check, path)
        if config.get("offVariation") is not None:
            self._variation(config["offVariation"], f"{path}/offVariation")
        self._validate_targets(config, path)
        self._validate_rules(config, path)
        if "fallthrough" in config:
            self._validate_variation_or_rollout(config["fallthrough"], f"{path}/fallthrough")
        elif self.strict:
            raise ValidationError(
                "missing required field 'fallthrough'", path=f"{path}/fallthrough"
            )
        self._validate_prerequisites(config, path)

    def _validate_targets(self, config: dict[str, Any], path: str) -> None:
        targeted: dict[tuple[str, str], str] = {}
        for list_name in ("targets", "contextTargets"):
            entries = require_list(config.get(list_name, []), f"{path}/{list_name}")
            for index, target in enumerate(entries):
                target_path = f"{path}/{list_name}/{index}"
                target = require_object(target, target_path)
                values = require_strings(
                    field(target, "values", target_path), f"{target_path}/values"
                )
                self._variation(field(target, "variation", target_path), f"{target_path}/variation")
                kind = target.get("contextKind")
                if list_name == "contextTargets" or kind is not None:
                    kind = require_string(
                        field(target, "contextKind", target_path), f"{target_path}/contextKind"
                    )
                    if self.strict and not is_valid_context_kind(kind):
                        raise ValidationError(
                            f"invalid context kind {kind!r}", path=f"{target_path}/contextKind"
                        )
                    if self.strict and list_name == "targets" and kind != "user":
                        raise ValidationError(
                            "'targets' holds user keys; other kinds belong in 'contextTargets'",
                            path=f"{target_path}/contextKind",
                        )
                if not self.strict:
                    continue
                for value_index, value in enumerate(values):
                    seen = targeted.get((kind or "user", value))
                    here = f"{target_path}/values/{value_index}"
                    if seen is not None:
                        raise ValidationError(
                            f"{kind or 'user'} key {value!r} is targeted twice (also at {seen})",
                            path=here,
                        )
                    targeted[(kind or "user", value)] = here

    def _validate_rules(self, config: dict[str, Any], path: str) -> None:
        rules = require_list(config.get("rules", []), f"{path}/rules")
        ids: set[str] = set()
        for index, rule in enumerate(rules):
            rule_path = f"{path}/rules/{index}"
            rule = validate_rule_clauses(rule, rule_path, ids, strict=self.strict)
            for name, check in (
                ("trackEvents", require_bool),
                ("description", check_text),
                ("disabled", require_bool),
                ("ref", check_name),
            ):
                check_optional(rule, name, check, rule_path)
            self._validate_variation_or_rollout(rule, rule_path)

    def _validate_variation_or_rollout(self, holder: Any, path: str) -> None:
        holder = require_object(holder, path)
        has_variation = holder.get("variation") is not None
        has_rollout = holder.get("rollout") is not None
        if self.strict and has_variation == has_rollout:
            raise ValidationError(
                "exactly one of 'variation' and 'rollout' is required", path=f"{path}/variation"
            )
        if has_variation:
            self._variation(holder["variation"], f"{path}/variation")
        if has_rollout:
            self._validate_rollout(holder["rollout"], f"{path}/rollout")

    def _validate_rollout(self, rollout: Any, path: str) -> None:
        rollout = require_object(rollout, path)
        weighted = require_list(field(rollout, "variations", path), f"{path}/variations")
        if self.strict and not weighted:
            raise ValidationError(
                "a rollout needs at least one variation", path=f"{path}/variations"
            )
        total = 0
        for index, item in enumerate(weighted):
            item_path = f"{path}/variations/{index}"
            item = require_object(item, item_path)
            self._variation(field(item, "variation", item_path), f"{item_path}/variation")
            weight = require_int(field(item, "weight", item_path), f"{item_path}/weight")
            check_optional(item, "_untracked", require_bool, item_path)
            if self.strict and not 0 <= weight <= TOTAL_WEIGHT:
                raise ValidationError(
                    f"weight {weight} is outside 0..{TOTAL_WEIGHT}", path=f"{item_path}/weight"
                )
            total += weight
        if self.strict and total != TOTAL_WEIGHT:
            raise ValidationError(
                f"rollout weights add up to {total}, not {TOTAL_WEIGHT} (100%)",
                path=f"{path}/variations",
            )
        check_optional(rollout, "seed", require_int, path)
        check_optional(rollout, "bucketBy", require_string, path)
        check_optional(rollout, "contextKind", require_string, path)
        check_optional(rollout, "experimentAllocation", require_object, path)
        if rollout.get("kind") not in (None, "rollout", "experiment"):
            raise ValidationError(
                "rollout 'kind' must be 'rollout' or 'experiment'", path=f"{path}/kind"
            )
        if not self.strict:
            return
        kind = rollout.get("contextKind")
        if kind is not None and not is_valid_context_kind(kind):
            raise ValidationError(f"invalid context kind {kind!r}", path=f"{path}/contextKind")
        bucket_by = rollout.get("bucketBy")
        if bucket_by is not None and not is_attribute_reference(bucket_by):
            raise ValidationError(
                f"invalid attribute reference {bucket_by!r}", path=f"{path}/bucketBy"
            )

    def _validate_prerequisites(self, config: dict[str, Any], path: str) -> None:
        prerequisites = require_list(config.get("prerequisites", []), f"{path}/prerequisites")
        seen: set[str] = set()
        for index, prerequisite in enumerate(prerequisites):
            item_path = f"{path}/prerequisites/{index}"
            prerequisite = require_object(prerequisite, item_path)
            key = require_string(field(prerequisite, "key", item_path), f"{item_path}/key")
            variation = require_int(
                field(prerequisite, "variation", item_path), f"{item_path}/variation"
            )
            if not self.strict:
                continue
            if key == self.key:
                raise ValidationError(
                    "a flag cannot be its own prerequisite", path=f"{item_path}/key"
                )
            if key in seen:
                raise ValidationError(
                    f"prerequisite {key!r} is listed twice", path=f"{item_path}/key"
                )
            seen.add(key)
            if self.flag_lookup is None:
                continue
            other = self.flag_lookup(key)
            if other is None:
                raise ValidationError(
                    f"prerequisite flag {key!r} does not exist", path=f"{item_path}/key"
                )
            count = len(other.get("variations", []))
            if not 0 <= variation < count:
                raise ValidationError(
                    f"variation {variation} is out of range for prerequisite flag {key!r} "
                    f"(it has {count})",
                    path=f"{item_path}/variation",
                )
            if self._leads_back(key):
                raise ValidationError(
                    f"prerequisite {key!r} leads back to {self.key!r}: "
                    "prerequisites cannot form a cycle",
                    path=f"{item_path}/key",
                )

    def _leads_back(self, start: str) -> bool:
        """Whether following prerequisites from flag `start` (in the same environment) reaches
        this flag; iterative, as chains of flags may be long."""
        assert self.flag_lookup is not None
        env_key = self.environment_key
        pending, seen = [start], set()
        while pending:
            key = pending.pop()
            if key == self.key:
                return True
            if key in seen:
                continue
            seen.add(key)
            other = self.flag_lookup(key)
            config = (other or {}).get("environments", {}).get(env_key) or {}
            pending.extend(
                str(item.get("key"))
                for item in config.get("prerequisites", [])
                if isinstance(item, dict)
            )
        return False
