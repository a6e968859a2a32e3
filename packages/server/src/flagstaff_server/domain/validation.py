"""Validation of REST flag and segment documents; the first problem raises `ValidationError` with
the JSON pointer of the offending value. Strict mode (every edit) also checks meaning: variation
indices, weights, regexes, semvers, dates, operators, attribute references, duplicate targets.
Lenient mode (imports of LaunchDarkly data, which may be deliberately malformed) checks only the
JSON types the SDK decoders insist on, and in both modes values and the whole document nest no
deeper than `nesting` allows. Reads nothing but its arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from flagstaff_core import pattern_error

from flagstaff_server.domain.document import (
    NAME_MAX_LENGTH,
    TAG_MAX_LENGTH,
    TEXT_MAX_LENGTH,
    Document,
    field,
    is_valid_context_kind,
    is_valid_key,
    json_equal,
    pointer,
    require_bool,
    require_int,
    require_list,
    require_object,
    require_string,
    require_strings,
    require_text,
)
from flagstaff_server.errors import ValidationError
from flagstaff_server.nesting import (
    MAX_DEPTH,
    MAX_DOCUMENT_DEPTH,
    too_deep_message,
    where_too_deep,
)

FlagLookup = Callable[[str], Document | None]
"""Finds another flag of the same project by key (for prerequisites); None when absent."""

OPERATORS = frozenset(
    {
        "in",
        "endsWith",
        "startsWith",
        "matches",
        "contains",
        "lessThan",
        "lessThanOrEqual",
        "greaterThan",
        "greaterThanOrEqual",
        "before",
        "after",
        "segmentMatch",
        "semVerEqual",
        "semVerLessThan",
        "semVerGreaterThan",
    }
)
STRING_OPERATORS = frozenset({"endsWith", "startsWith", "contains", "matches", "segmentMatch"})
NUMERIC_OPERATORS = frozenset({"lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"})
DATE_OPERATORS = frozenset({"before", "after"})
SEMVER_OPERATORS = frozenset({"semVerEqual", "semVerLessThan", "semVerGreaterThan"})
TOTAL_WEIGHT = 100_000

_NUMBER = r"(?:0|[1-9][0-9]*)"
_IDENTIFIERS = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_SEMVER = re.compile(
    rf"^{_NUMBER}(?:\.{_NUMBER})?(?:\.{_NUMBER})?(?:-{_IDENTIFIERS})?(?:\+{_IDENTIFIERS})?$"
)
_RFC3339 = re.compile(r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def is_semver(text: str) -> bool:
    """SemVer 2.0 as LaunchDarkly reads it: minor and patch may be missing, no 'v' prefix."""
    return bool(_SEMVER.match(text))


def is_timestamp(value: Any) -> bool:
    """A clause date: Unix milliseconds, or an RFC 3339 string with date, time and zone."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if not isinstance(value, str):
        return False
    match = _RFC3339.match(value)
    if match is None:
        return False
    date, time, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    micros = (fraction or ".0")[1:7].ljust(6, "0")
    try:
        datetime.fromisoformat(f"{date}T{time}.{micros}{zone}")
    except ValueError:
        return False
    return True


def is_attribute_reference(text: str) -> bool:
    """An attribute reference: a plain name, or '/a/b' with ~0/~1 escapes and no empty parts."""
    if text == "":
        return False
    if not text.startswith("/"):
        return True
    parts = text[1:].split("/")
    return all(part != "" and not re.search(r"~(?![01])", part) for part in parts)


def check_name(value: Any, path: str) -> str:
    return require_text(value, path, NAME_MAX_LENGTH)


def check_text(value: Any, path: str) -> str:
    return require_text(value, path, TEXT_MAX_LENGTH)


def check_tags(value: Any, path: str) -> list[str]:
    tags = require_strings(value, path)
    for index, tag in enumerate(tags):
        require_text(tag, f"{path}/{index}", TAG_MAX_LENGTH)
    return tags


def check_value_depth(value: Any, path: str) -> None:
    """A stored JSON value (a variation's, a clause's) nests at most `MAX_DEPTH` deep; the error
    names the value."""
    if where_too_deep(value, MAX_DEPTH) is not None:
        raise ValidationError(f"the value is {too_deep_message(MAX_DEPTH)}", path=path)


def check_document_depth(document: Document) -> None:
    """Wherever a patch put them, members nest at most `MAX_DOCUMENT_DEPTH` deep in all."""
    place = where_too_deep(document, MAX_DOCUMENT_DEPTH)
    if place is not None:
        raise ValidationError(
            f"the document is {too_deep_message(MAX_DOCUMENT_DEPTH)} at {place}", path=place
        )


def validate_flag_document(
    document: Document, *, strict: bool = True, flag_lookup: FlagLookup | None = None
) -> None:
    """Raise `ValidationError` (with `path`) for the first problem in a REST flag document.

    `flag_lookup` lets strict mode check that prerequisites name existing flags and valid
    variation indices of those flags; without it only their shape is checked.
    """
    _FlagValidator(document, strict=strict, flag_lookup=flag_lookup).validate()


def validate_segment_document(document: Document, *, strict: bool = True) -> None:
    """Raise `ValidationError` (with `path`) for the first problem in a REST segment document."""
    _SegmentValidator(document, strict=strict).validate()


def validate_clause(clause: Any, path: str, *, strict: bool = True) -> None:
    """Check one clause (shared by flag rules and segment rules)."""
    clause = require_object(clause, path)
    attribute = require_string(field(clause, "attribute", path), f"{path}/attribute")
    op = require_string(field(clause, "op", path), f"{path}/op")
    values = require_list(field(clause, "values", path), f"{path}/values")
    if "negate" in clause:
        require_bool(clause["negate"], f"{path}/negate")
    if "_id" in clause:
        require_string(clause["_id"], f"{path}/_id")
    kind = clause.get("contextKind")
    if kind is not None:
        require_string(kind, f"{path}/contextKind")
    for index, value in enumerate(values):
        check_value_depth(value, f"{path}/values/{index}")
    if not strict:
        return
    if kind is not None and not is_valid_context_kind(kind):
        raise ValidationError(f"invalid context kind {kind!r}", path=f"{path}/contextKind")
    if op not in OPERATORS:
        raise ValidationError(
            f"unknown operator {op!r} (expected one of {', '.join(sorted(OPERATORS))})",
            path=f"{path}/op",
        )
    if op != "segmentMatch":
        if attribute == "":
            raise ValidationError("a clause needs an attribute", path=f"{path}/attribute")
        if kind is not None and not is_attribute_reference(attribute):
            raise ValidationError(
                f"invalid attribute reference {attribute!r}", path=f"{path}/attribute"
            )
    for index, value in enumerate(values):
        _validate_clause_value(op, value, f"{path}/values/{index}")


def _validate_clause_value(op: str, value: Any, path: str) -> None:
    if op in STRING_OPERATORS:
        if not isinstance(value, str):
            raise ValidationError(f"'{op}' clause values must be strings", path=path)
        if op == "matches":
            error = pattern_error(value)
            if error is not None:
                raise ValidationError(
                    f"invalid regular expression {value!r} (RE2 syntax): {error}", path=path
                )
    elif op in NUMERIC_OPERATORS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError(f"'{op}' clause values must be numbers", path=path)
    elif op in DATE_OPERATORS:
        if not is_timestamp(value):
            raise ValidationError(
                f"'{op}' clause values must be Unix milliseconds or RFC 3339 timestamps "
                f"with a time zone, not {value!r}",
                path=path,
            )
    elif op in SEMVER_OPERATORS:
        if not isinstance(value, str) or not is_semver(value):
            raise ValidationError(f"invalid semantic version {value!r}", path=path)
    elif op == "in" and isinstance(value, dict | list):
        raise ValidationError("'in' clause values must be strings, numbers or booleans", path=path)


def _validate_key(document: Document, what: str, *, strict: bool) -> str:
    key = require_string(field(document, "key", ""), "/key")
    if strict and not is_valid_key(key):
        raise ValidationError(
            f"invalid {what} key {key!r}: use 1-256 letters, digits, '.', '_' or '-'", path="/key"
        )
    return key


def _optional(obj: dict[str, Any], name: str, check: Callable[[Any, str], Any], path: str) -> None:
    if name in obj and obj[name] is not None:
        check(obj[name], f"{path}/{name}")


def _validate_rule_clauses(value: Any, path: str, ids: set[str], *, strict: bool) -> dict[str, Any]:
    """The part flag and segment rules share: an object whose `_id` (when present) is not in
    `ids` (checked when `strict`; added either way) and whose clauses are valid. The rule object."""
    rule = require_object(value, path)
    if "_id" in rule:
        rule_id = require_string(rule["_id"], f"{path}/_id")
        if strict and rule_id in ids:
            raise ValidationError(f"duplicate rule id {rule_id!r}", path=f"{path}/_id")
        ids.add(rule_id)
    clauses = require_list(field(rule, "clauses", path), f"{path}/clauses")
    for index, clause in enumerate(clauses):
        validate_clause(clause, f"{path}/clauses/{index}", strict=strict)
    return rule


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
        self.key = _validate_key(document, "flag", strict=self.strict)
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
            _optional(document, name, check, "")
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
            _optional(variation, "name", check_name, path)
            _optional(variation, "description", check_text, path)
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
            _optional(availability, name, require_bool, "/clientSideAvailability")

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
            _optional(config, name, check, path)
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
            rule = _validate_rule_clauses(rule, rule_path, ids, strict=self.strict)
            for name, check in (
                ("trackEvents", require_bool),
                ("description", check_text),
                ("disabled", require_bool),
                ("ref", check_name),
            ):
                _optional(rule, name, check, rule_path)
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
            _optional(item, "_untracked", require_bool, item_path)
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
        _optional(rollout, "seed", require_int, path)
        _optional(rollout, "bucketBy", require_string, path)
        _optional(rollout, "contextKind", require_string, path)
        _optional(rollout, "experimentAllocation", require_object, path)
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


class _SegmentValidator:
    def __init__(self, document: Document, *, strict: bool):
        self.document = document
        self.strict = strict

    def validate(self) -> None:
        document = require_object(self.document, "")
        _validate_key(document, "segment", strict=self.strict)
        check_name(field(document, "name", ""), "/name")
        for name, check in (
            ("description", check_text),
            ("tags", check_tags),
            ("version", require_int),
            ("creationDate", require_int),
            ("lastModifiedDate", require_int),
            ("unbounded", require_bool),
            ("unboundedContextKind", require_string),
            ("generation", require_int),
            ("salt", require_string),
            ("deleted", require_bool),
        ):
            _optional(document, name, check, "")
        included = require_strings(document.get("included", []), "/included")
        excluded = require_strings(document.get("excluded", []), "/excluded")
        if self.strict:
            self._check_disjoint(included, excluded, "user", "/excluded")
        included_by_kind = self._context_lists(document, "includedContexts")
        excluded_by_kind = self._context_lists(document, "excludedContexts")
        if self.strict:
            for kind, (keys, path) in excluded_by_kind.items():
                self._check_disjoint(included_by_kind.get(kind, ([], ""))[0], keys, kind, path)
        rules = require_list(document.get("rules", []), "/rules")
        ids: set[str] = set()
        for index, rule in enumerate(rules):
            self._validate_rule(rule, f"/rules/{index}", ids)
        check_document_depth(document)

    def _context_lists(self, document: Document, name: str) -> dict[str, tuple[list[str], str]]:
        by_kind: dict[str, tuple[list[str], str]] = {}
        for index, entry in enumerate(require_list(document.get(name, []), f"/{name}")):
            path = f"/{name}/{index}"
            entry = require_object(entry, path)
            kind = require_string(field(entry, "contextKind", path), f"{path}/contextKind")
            values = require_strings(field(entry, "values", path), f"{path}/values")
            if self.strict and not is_valid_context_kind(kind):
                raise ValidationError(f"invalid context kind {kind!r}", path=f"{path}/contextKind")
            by_kind[kind] = ([*by_kind.get(kind, ([], ""))[0], *values], f"{path}/values")
        return by_kind

    @staticmethod
    def _check_disjoint(
        included: Sequence[str], excluded: Sequence[str], kind: str, path: str
    ) -> None:
        both = sorted(set(included) & set(excluded))
        if both:
            raise ValidationError(
                f"{kind} key {both[0]!r} is both included and excluded", path=path
            )

    def _validate_rule(self, rule: Any, path: str, ids: set[str]) -> None:
        rule = _validate_rule_clauses(rule, path, ids, strict=self.strict)
        _optional(rule, "description", check_text, path)
        _optional(rule, "bucketBy", require_string, path)
        _optional(rule, "rolloutContextKind", require_string, path)
        if rule.get("weight") is not None:
            weight = require_int(rule["weight"], f"{path}/weight")
            if self.strict and not 0 <= weight <= TOTAL_WEIGHT:
                raise ValidationError(
                    f"weight {weight} is outside 0..{TOTAL_WEIGHT}", path=f"{path}/weight"
                )
        if not self.strict:
            return
        kind = rule.get("rolloutContextKind")
        if kind is not None and not is_valid_context_kind(kind):
            raise ValidationError(
                f"invalid context kind {kind!r}", path=f"{path}/rolloutContextKind"
            )
        bucket_by = rule.get("bucketBy")
        if bucket_by is not None and not is_attribute_reference(bucket_by):
            raise ValidationError(
                f"invalid attribute reference {bucket_by!r}", path=f"{path}/bucketBy"
            )
