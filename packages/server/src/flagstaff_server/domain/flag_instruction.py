"""Semantic patch for flags (LaunchDarkly's `domain-model=launchdarkly.semanticpatch`): each
instruction kind edits a copy of the flag document; the first bad instruction raises and the
caller's document is untouched. Variations, rules and clauses are named by `_id`. Pure; the result
still needs `validate_flag_document` and `bump_versions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flagstaff_server.domain.document import (
    Document,
    IdFactory,
    clone,
    is_valid_context_kind,
    json_equal,
)
from flagstaff_server.domain.flag import fill_flag_ids, flag_kind
from flagstaff_server.domain.instruction import (
    Instruction,
    SemanticPatchResult,
    add_clauses,
    add_tags,
    add_values_to_clause,
    check_instructions,
    find_rule,
    insert_rule,
    read_clauses,
    remove_clauses,
    remove_rule,
    remove_tags,
    remove_values_from_clause,
    reorder_rules,
    update_clause,
)
from flagstaff_server.domain.validation import TOTAL_WEIGHT, FlagLookup, is_attribute_reference
from flagstaff_server.errors import ValidationError

USER = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class _FlagEdit:
    """What one semantic patch works on: a private copy of the flag, edited in place."""

    document: Document
    environment_key: str | None
    now_ms: int
    new_id: IdFactory
    flag_lookup: FlagLookup | None
    requests: set[str] = field(default_factory=set)
    """Outcomes for the caller rather than the document ("delete")."""

    def config(self, instruction: Instruction) -> dict[str, Any]:
        """The environment configuration an environment-scoped instruction edits."""
        if self.environment_key is None:
            raise ValidationError(
                f"instruction {instruction.index} ({instruction.kind}) needs 'environmentKey'",
                path="/environmentKey",
            )
        config: dict[str, Any] | None = self.document.get("environments", {}).get(
            self.environment_key
        )
        if config is None:
            raise ValidationError(
                f"flag {self.document.get('key')!r} has no environment {self.environment_key!r}",
                path="/environmentKey",
            )
        for name in ("targets", "contextTargets", "rules", "prerequisites"):
            config.setdefault(name, [])
        return config

    def variation_index(self, instruction: Instruction, name: str = "variationId") -> int:
        variation_id = instruction.string(name)
        for index, variation in enumerate(self.document.get("variations", [])):
            if variation.get("_id") == variation_id:
                return index
        raise instruction.error(f"no variation with id {variation_id!r}", name)

    def served(self, instruction: Instruction) -> dict[str, Any]:
        """`{"variation": i}` from `variationId`, or `{"rollout": ...}` from `rolloutWeights`."""
        if instruction.has("variationId"):
            return {"variation": self.variation_index(instruction)}
        if not instruction.has("rolloutWeights"):
            raise instruction.error("'variationId' or 'rolloutWeights' is required", "variationId")
        weights = instruction.mapping("rolloutWeights")
        ids = {v.get("_id"): i for i, v in enumerate(self.document.get("variations", []))}
        weighted: list[dict[str, Any]] = []
        for variation_id, weight in weights.items():
            where = f"rolloutWeights/{variation_id}"
            if variation_id not in ids:
                raise instruction.error(f"no variation with id {variation_id!r}", where)
            if isinstance(weight, bool) or not isinstance(weight, int):
                raise instruction.error("weights must be integers", where)
            if not 0 <= weight <= TOTAL_WEIGHT:
                raise instruction.error(f"weight {weight} is outside 0..{TOTAL_WEIGHT}", where)
            weighted.append({"variation": ids[variation_id], "weight": weight})
        total = sum(item["weight"] for item in weighted)
        if total != TOTAL_WEIGHT:
            raise instruction.error(
                f"weights add up to {total}, not {TOTAL_WEIGHT} (100%)", "rolloutWeights"
            )
        rollout: dict[str, Any] = {
            "variations": sorted(weighted, key=lambda item: int(item["variation"])),
            "contextKind": instruction.optional_string("rolloutContextKind") or USER,
        }
        if not is_valid_context_kind(rollout["contextKind"]):
            raise instruction.error("invalid context kind", "rolloutContextKind")
        if instruction.has("rolloutBucketBy"):
            rollout["bucketBy"] = instruction.string("rolloutBucketBy")
            if not is_attribute_reference(rollout["bucketBy"]):
                raise instruction.error("invalid attribute reference", "rolloutBucketBy")
        return {"rollout": rollout}


def apply_semantic_patch(
    document: Document,
    instructions: Any,
    *,
    environment_key: str | None,
    now_ms: int,
    new_id: IdFactory,
    flag_lookup: FlagLookup | None = None,
) -> SemanticPatchResult:
    """Apply flag instructions in order, all or nothing.

    `flag_lookup` resolves prerequisite flags (`addPrerequisite` names their variations by id).
    `deleteFlag` sets `result.delete`; the caller deletes the flag instead of storing it.
    """
    edit = _FlagEdit(
        document=clone(document),
        environment_key=environment_key,
        now_ms=now_ms,
        new_id=new_id,
        flag_lookup=flag_lookup,
    )
    for index, params in enumerate(check_instructions(instructions)):
        instruction = Instruction(index=index, params=params)
        handler = FLAG_INSTRUCTIONS.get(instruction.kind)
        if handler is None:
            raise instruction.error(f"unknown instruction kind {instruction.kind!r}", "kind")
        handler(edit, instruction)
    return SemanticPatchResult(
        document=fill_flag_ids(edit.document, new_id=new_id), delete="delete" in edit.requests
    )


# --- targeting on/off and flag-wide settings --------------------------------------------------


def _turn_flag_on(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["on"] = True


def _turn_flag_off(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["on"] = False


def _update_track_events(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["trackEvents"] = instruction.boolean("trackEvents")


def _update_track_events_fallthrough(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["trackEventsFallthrough"] = instruction.boolean("trackEvents")


def _update_fallthrough(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["fallthrough"] = edit.served(instruction)


def _update_off_variation(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    config["offVariation"] = (
        edit.variation_index(instruction) if instruction.has("variationId") else None
    )


# --- rules and clauses -------------------------------------------------------------------------


def _new_rule(edit: _FlagEdit, instruction: Instruction) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "_id": edit.new_id(),
        "clauses": read_clauses(instruction, edit.new_id),
        "trackEvents": instruction.boolean("trackEvents")
        if instruction.has("trackEvents")
        else False,
    }
    rule.update(edit.served(instruction))
    if instruction.has("description"):
        rule["description"] = instruction.string("description")
    if instruction.has("ref"):
        rule["ref"] = instruction.string("ref")
    return rule


def _add_rule(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    insert_rule(config["rules"], _new_rule(edit, instruction), instruction)


def _remove_rule(edit: _FlagEdit, instruction: Instruction) -> None:
    remove_rule(edit.config(instruction)["rules"], instruction, missing_ok=False)


def _reorder_rules(edit: _FlagEdit, instruction: Instruction) -> None:
    reorder_rules(edit.config(instruction)["rules"], instruction)


def _replace_rules(edit: _FlagEdit, instruction: Instruction) -> None:
    """The environment's rules become the given list. A rule that names its `_id` keeps it (so a
    client saving the whole list leaves the ids of kept rules, and evaluation reasons' `ruleId`,
    unchanged), as do its clauses that name theirs; others get fresh ids."""
    config = edit.config(instruction)
    rules = []
    taken: set[str] = set()
    for position, given in enumerate(instruction.objects("rules")):
        nested = instruction.nested(given)
        try:
            rule = _new_rule(edit, nested)
            if "_id" in given:
                rule["_id"] = _given_id(nested, "_id", taken)
            _keep_clause_ids(nested, rule)
        except ValidationError as error:
            prefix = instruction.path("rules")
            tail = (error.path or "").removeprefix(instruction.path())
            raise ValidationError(error.message, path=f"{prefix}/{position}{tail}") from None
        rules.append(rule)
    config["rules"] = rules


MAX_ID_LENGTH = 256


def _given_id(instruction: Instruction, name: str, taken: set[str]) -> str:
    """A client-chosen `_id`: a non-empty string without spaces, not used twice in one list."""
    value = instruction.string(name)
    if not value or len(value) > MAX_ID_LENGTH or any(char.isspace() for char in value):
        raise instruction.error(
            f"'{name}' must be 1 to {MAX_ID_LENGTH} characters without spaces", name
        )
    if value in taken:
        raise instruction.error(f"the id {value!r} is given twice", name)
    taken.add(value)
    return value


def _keep_clause_ids(instruction: Instruction, rule: dict[str, Any]) -> None:
    given = instruction.params.get("clauses")
    if not isinstance(given, list):
        return
    taken: set[str] = set()
    for position, (clause, built) in enumerate(zip(given, rule["clauses"], strict=True)):
        if isinstance(clause, dict) and "_id" in clause:
            nested = Instruction(
                index=instruction.index, params={"kind": instruction.kind, **clause}
            )
            try:
                built["_id"] = _given_id(nested, "_id", taken)
            except ValidationError as error:
                tail = (error.path or "").removeprefix(instruction.path())
                raise ValidationError(
                    error.message, path=instruction.path(f"clauses/{position}{tail}")
                ) from None


def _update_rule_served(edit: _FlagEdit, instruction: Instruction) -> None:
    rule = find_rule(edit.config(instruction)["rules"], instruction)
    served = edit.served(instruction)
    rule.pop("variation", None)
    rule.pop("rollout", None)
    rule.update(served)


def _update_rule_description(edit: _FlagEdit, instruction: Instruction) -> None:
    find_rule(edit.config(instruction)["rules"], instruction)["description"] = instruction.string(
        "description"
    )


def _update_rule_track_events(edit: _FlagEdit, instruction: Instruction) -> None:
    find_rule(edit.config(instruction)["rules"], instruction)["trackEvents"] = instruction.boolean(
        "trackEvents"
    )


def _add_clauses(edit: _FlagEdit, instruction: Instruction) -> None:
    add_clauses(edit.config(instruction)["rules"], instruction, edit.new_id)


def _remove_clauses(edit: _FlagEdit, instruction: Instruction) -> None:
    remove_clauses(edit.config(instruction)["rules"], instruction)


def _update_clause(edit: _FlagEdit, instruction: Instruction) -> None:
    update_clause(edit.config(instruction)["rules"], instruction, edit.new_id)


def _add_values_to_clause(edit: _FlagEdit, instruction: Instruction) -> None:
    add_values_to_clause(edit.config(instruction)["rules"], instruction)


def _remove_values_from_clause(edit: _FlagEdit, instruction: Instruction) -> None:
    remove_values_from_clause(edit.config(instruction)["rules"], instruction)


# --- individual targets ------------------------------------------------------------------------
# User keys live in `targets`; other kinds in `contextTargets`, where a user entry with no values
# marks where the user targets of that variation are checked (protocol §3.4).


def _target_lists(config: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    if kind == USER:
        targets: list[dict[str, Any]] = config["targets"]
        return targets
    return [t for t in config["contextTargets"] if t.get("contextKind") == kind]


def _context_kind(instruction: Instruction) -> str:
    kind = instruction.optional_string("contextKind") or USER
    if not is_valid_context_kind(kind):
        raise instruction.error(f"invalid context kind {kind!r}", "contextKind")
    return kind


def _add_target_values(
    config: dict[str, Any], kind: str, variation: int, values: list[str], instruction: Instruction
) -> None:
    targeted = {
        key: target["variation"]
        for target in _target_lists(config, kind)
        if target.get("variation") != variation
        for key in target.get("values", [])
    }
    for position, value in enumerate(values):
        if value in targeted:
            raise instruction.error(
                f"{kind} key {value!r} is already targeted by variation {targeted[value]}",
                f"values/{position}",
            )
    entry = next((t for t in _target_lists(config, kind) if t.get("variation") == variation), None)
    if entry is None:
        entry = {"values": [], "variation": variation}
        if kind == USER:
            config["targets"].append(entry)
        else:
            entry["contextKind"] = kind
            config["contextTargets"].append(entry)
    present = set(entry["values"])
    for value in values:
        if value not in present:
            present.add(value)
            entry["values"].append(value)
    _sync_user_markers(config)


def _remove_target_values(
    config: dict[str, Any], kind: str, variation: int | None, values: list[str] | None
) -> None:
    for target in _target_lists(config, kind):
        if variation is None or target.get("variation") == variation:
            unwanted = set(values or ())
            target["values"] = [
                v for v in target.get("values", []) if values is not None and v not in unwanted
            ]
    config["targets"] = [t for t in config["targets"] if t.get("values")]
    config["contextTargets"] = [
        t for t in config["contextTargets"] if t.get("values") or t.get("contextKind", USER) == USER
    ]
    _sync_user_markers(config)


def _sync_user_markers(config: dict[str, Any]) -> None:
    """Keep exactly one empty user entry in `contextTargets` per variation with user targets."""
    user_variations = [t["variation"] for t in config["targets"]]
    kept: list[dict[str, Any]] = []
    seen: set[int] = set()
    for target in config["contextTargets"]:
        is_marker = target.get("contextKind", USER) == USER and not target.get("values")
        if is_marker:
            if target.get("variation") not in user_variations or target["variation"] in seen:
                continue
            seen.add(target["variation"])
        kept.append(target)
    kept.extend(
        {"contextKind": USER, "values": [], "variation": variation}
        for variation in user_variations
        if variation not in seen
    )
    config["contextTargets"] = kept


def _add_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    kind = _context_kind(instruction)
    variation = edit.variation_index(instruction)
    _add_target_values(config, kind, variation, instruction.strings("values"), instruction)


def _add_user_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    variation = edit.variation_index(instruction)
    _add_target_values(config, USER, variation, instruction.strings("values"), instruction)


def _remove_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    kind = _context_kind(instruction)
    variation = edit.variation_index(instruction)
    _remove_target_values(config, kind, variation, instruction.strings("values"))


def _remove_user_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    variation = edit.variation_index(instruction)
    _remove_target_values(config, USER, variation, instruction.strings("values"))


def _replace_targets_of(edit: _FlagEdit, instruction: Instruction, *, users_only: bool) -> None:
    config = edit.config(instruction)
    if users_only:
        config["targets"] = []
    else:
        config["targets"] = []
        config["contextTargets"] = []
    _sync_user_markers(config)
    for position, given in enumerate(instruction.objects("targets")):
        nested = instruction.nested(given)
        try:
            kind = USER if users_only else _context_kind(nested)
            variation = edit.variation_index(nested)
            _add_target_values(config, kind, variation, nested.strings("values"), nested)
        except ValidationError as error:
            tail = (error.path or "").removeprefix(instruction.path())
            raise ValidationError(
                error.message, path=f"{instruction.path('targets')}/{position}{tail}"
            ) from None


def _replace_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    _replace_targets_of(edit, instruction, users_only=False)


def _replace_user_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    _replace_targets_of(edit, instruction, users_only=True)


def _clear_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    variation = edit.variation_index(instruction)
    kinds = {USER} | {t.get("contextKind", USER) for t in config["contextTargets"]}
    for kind in kinds:
        _remove_target_values(config, kind, variation, None)


def _clear_user_targets(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    _remove_target_values(config, USER, edit.variation_index(instruction), None)


# --- prerequisites -----------------------------------------------------------------------------


def _prerequisite(edit: _FlagEdit, instruction: Instruction) -> dict[str, Any]:
    key = instruction.string("key")
    if key == edit.document.get("key"):
        raise instruction.error("a flag cannot be its own prerequisite", "key")
    other = edit.flag_lookup(key) if edit.flag_lookup is not None else None
    if other is None:
        raise instruction.error(f"prerequisite flag {key!r} does not exist", "key")
    variation_id = instruction.string("variationId")
    for index, variation in enumerate(other.get("variations", [])):
        if variation.get("_id") == variation_id:
            return {"key": key, "variation": index}
    raise instruction.error(
        f"flag {key!r} has no variation with id {variation_id!r}", "variationId"
    )


def _add_prerequisite(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    prerequisite = _prerequisite(edit, instruction)
    if any(p.get("key") == prerequisite["key"] for p in config["prerequisites"]):
        raise instruction.error(f"{prerequisite['key']!r} is already a prerequisite", "key")
    config["prerequisites"].append(prerequisite)


def _remove_prerequisite(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    key = instruction.string("key")
    kept = [p for p in config["prerequisites"] if p.get("key") != key]
    if len(kept) == len(config["prerequisites"]):
        raise instruction.error(f"{key!r} is not a prerequisite", "key")
    config["prerequisites"] = kept


def _update_prerequisite(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    prerequisite = _prerequisite(edit, instruction)
    for existing in config["prerequisites"]:
        if existing.get("key") == prerequisite["key"]:
            existing["variation"] = prerequisite["variation"]
            return
    raise instruction.error(f"{prerequisite['key']!r} is not a prerequisite", "key")


def _replace_prerequisites(edit: _FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    prerequisites: list[dict[str, Any]] = []
    for position, given in enumerate(instruction.objects("prerequisites")):
        nested = instruction.nested(given)
        try:
            prerequisite = _prerequisite(edit, nested)
        except ValidationError as error:
            tail = (error.path or "").removeprefix(instruction.path())
            raise ValidationError(
                error.message, path=f"{instruction.path('prerequisites')}/{position}{tail}"
            ) from None
        if any(p["key"] == prerequisite["key"] for p in prerequisites):
            raise instruction.error(
                f"{prerequisite['key']!r} is listed twice", f"prerequisites/{position}/key"
            )
        prerequisites.append(prerequisite)
    config["prerequisites"] = prerequisites


# --- variations --------------------------------------------------------------------------------


def _check_unique_value(edit: _FlagEdit, instruction: Instruction, value: Any, skip: int) -> None:
    for index, variation in enumerate(edit.document.get("variations", [])):
        if index != skip and json_equal(variation.get("value"), value):
            raise instruction.error(f"variation {index} already has this value", "value")


def _add_variation(edit: _FlagEdit, instruction: Instruction) -> None:
    value = instruction.value("value")
    _check_unique_value(edit, instruction, value, skip=-1)
    variation: dict[str, Any] = {"_id": edit.new_id(), "value": value}
    for name in ("name", "description"):
        if instruction.has(name):
            variation[name] = instruction.string(name)
    edit.document.setdefault("variations", []).append(variation)
    edit.document["kind"] = flag_kind(edit.document["variations"])


def _update_variation(edit: _FlagEdit, instruction: Instruction) -> None:
    index = edit.variation_index(instruction)
    variation = edit.document["variations"][index]
    if "value" in instruction.params:
        value = instruction.value("value")
        _check_unique_value(edit, instruction, value, skip=index)
        variation["value"] = value
    for name in ("name", "description"):
        if instruction.has(name):
            variation[name] = instruction.string(name)
    edit.document["kind"] = flag_kind(edit.document["variations"])


def _variation_uses(document: Document, index: int) -> list[str]:
    """Where a variation index is served (so it cannot be removed)."""
    uses: list[str] = []
    defaults = document.get("defaults") or {}
    uses += [
        f"defaults.{name}"
        for name in ("onVariation", "offVariation")
        if defaults.get(name) == index
    ]
    for env_key, config in document.get("environments", {}).items():
        if config.get("offVariation") == index:
            uses.append(f"{env_key} off variation")
        if _serves(config.get("fallthrough") or {}, index):
            uses.append(f"{env_key} default rule")
        uses += [
            f"{env_key} rule {rule.get('_id')}"
            for rule in config.get("rules", [])
            if _serves(rule, index)
        ]
        for name in ("targets", "contextTargets"):
            if any(t.get("variation") == index and t.get("values") for t in config.get(name, [])):
                uses.append(f"{env_key} individual targets")
    return uses


def _serves(holder: dict[str, Any], index: int) -> bool:
    if holder.get("variation") == index:
        return True
    rollout = holder.get("rollout") or {}
    return any(
        item.get("variation") == index and item.get("weight", 0) > 0
        for item in rollout.get("variations", [])
    )


def _remove_variation(edit: _FlagEdit, instruction: Instruction) -> None:
    index = edit.variation_index(instruction)
    uses = _variation_uses(edit.document, index)
    if uses:
        raise instruction.error(
            f"variation {index} is still in use ({', '.join(uses)})", "variationId"
        )
    del edit.document["variations"][index]
    _shift_indices(edit.document, index)
    edit.document["kind"] = flag_kind(edit.document["variations"])


def _shift_indices(document: Document, removed: int) -> None:
    """Renumber every variation index above `removed` after it is deleted."""

    def shift(holder: dict[str, Any], name: str) -> None:
        value = holder.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > removed:
            holder[name] = value - 1

    def shift_served(holder: dict[str, Any]) -> None:
        shift(holder, "variation")
        rollout = holder.get("rollout")
        if isinstance(rollout, dict):
            # only zero-weight entries can still name the removed variation
            rollout["variations"] = [
                item for item in rollout.get("variations", []) if item.get("variation") != removed
            ]
            for item in rollout["variations"]:
                shift(item, "variation")

    defaults = document.get("defaults") or {}
    shift(defaults, "onVariation")
    shift(defaults, "offVariation")
    for config in document.get("environments", {}).values():
        shift(config, "offVariation")
        shift_served(config.get("fallthrough") or {})
        for rule in config.get("rules", []):
            shift_served(rule)
        for name in ("targets", "contextTargets"):
            config[name] = [t for t in config.get(name, []) if t.get("variation") != removed]
            for target in config[name]:
                shift(target, "variation")


def _update_default_variation(edit: _FlagEdit, instruction: Instruction) -> None:
    defaults = edit.document.setdefault("defaults", {"onVariation": 0, "offVariation": 0})
    found = False
    for name, target in (
        ("onVariationValue", "onVariation"),
        ("offVariationValue", "offVariation"),
    ):
        spelled = next(
            (n for n in (name, name[0].upper() + name[1:]) if n in instruction.params), None
        )
        if spelled is None:
            continue
        found = True
        wanted = instruction.params[spelled]
        values = [v.get("value") for v in edit.document.get("variations", [])]
        index = next((i for i, value in enumerate(values) if json_equal(value, wanted)), None)
        if index is None:
            raise instruction.error(f"no variation has the value {wanted!r}", spelled)
        defaults[target] = index
    if not found:
        raise instruction.error(
            "'onVariationValue' or 'offVariationValue' is required", "onVariationValue"
        )


# --- flag-level settings -----------------------------------------------------------------------


def _setter(name: str, value: Any) -> Callable[[_FlagEdit, Instruction], None]:
    def apply(edit: _FlagEdit, instruction: Instruction) -> None:
        edit.document[name] = value

    return apply


def _update_name(edit: _FlagEdit, instruction: Instruction) -> None:
    name = instruction.string("value")
    if not name.strip():
        raise instruction.error("a flag needs a non-empty name", "value")
    edit.document["name"] = name


def _update_description(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.document["description"] = instruction.string("value")


def _client_side(on: bool) -> Callable[[_FlagEdit, Instruction], None]:
    def apply(edit: _FlagEdit, instruction: Instruction) -> None:
        which = instruction.string("value")
        if which not in ("usingMobileKey", "usingEnvironmentId"):
            raise instruction.error(
                "'value' must be 'usingMobileKey' or 'usingEnvironmentId'", "value"
            )
        availability = edit.document.setdefault(
            "clientSideAvailability", {"usingMobileKey": True, "usingEnvironmentId": False}
        )
        availability[which] = on
        edit.document["includeInSnippet"] = bool(availability.get("usingEnvironmentId", False))

    return apply


def _archive(archived: bool) -> Callable[[_FlagEdit, Instruction], None]:
    def apply(edit: _FlagEdit, instruction: Instruction) -> None:
        edit.document["archived"] = archived
        if archived:
            edit.document["archivedDate"] = edit.now_ms
        else:
            edit.document.pop("archivedDate", None)
        for config in edit.document.get("environments", {}).values():
            config["archived"] = archived

    return apply


def _deprecate(deprecated: bool) -> Callable[[_FlagEdit, Instruction], None]:
    def apply(edit: _FlagEdit, instruction: Instruction) -> None:
        edit.document["deprecated"] = deprecated
        if deprecated:
            edit.document["deprecatedDate"] = edit.now_ms
        else:
            edit.document.pop("deprecatedDate", None)

    return apply


def _delete_flag(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.requests.add("delete")


def _add_tags(edit: _FlagEdit, instruction: Instruction) -> None:
    add_tags(edit.document, instruction)


def _remove_tags(edit: _FlagEdit, instruction: Instruction) -> None:
    remove_tags(edit.document, instruction)


def _update_maintainer_member(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.document["maintainerId"] = instruction.string("value")


def _remove_maintainer(edit: _FlagEdit, instruction: Instruction) -> None:
    for name in ("maintainerId", "maintainerTeamKey", "_maintainer", "_maintainerTeam"):
        edit.document.pop(name, None)


def _update_maintainer_team(edit: _FlagEdit, instruction: Instruction) -> None:
    edit.document["maintainerTeamKey"] = instruction.string("value")


def _custom_property(edit: _FlagEdit, instruction: Instruction) -> tuple[str, dict[str, Any]]:
    properties: dict[str, Any] = edit.document.setdefault("customProperties", {})
    return instruction.string("key"), properties


def _add_custom_properties(edit: _FlagEdit, instruction: Instruction) -> None:
    key, properties = _custom_property(edit, instruction)
    existing = properties.get(key) or {
        "name": instruction.optional_string("name") or key,
        "value": [],
    }
    for value in instruction.strings("values"):
        if value not in existing["value"]:
            existing["value"].append(value)
    properties[key] = existing


def _replace_custom_properties(edit: _FlagEdit, instruction: Instruction) -> None:
    key, properties = _custom_property(edit, instruction)
    name = instruction.optional_string("name") or (properties.get(key) or {}).get("name") or key
    properties[key] = {"name": name, "value": instruction.strings("values")}


def _remove_custom_properties(edit: _FlagEdit, instruction: Instruction) -> None:
    key, properties = _custom_property(edit, instruction)
    if key not in properties:
        raise instruction.error(f"no custom property {key!r}", "key")
    unwanted = instruction.strings("values")
    remaining = [v for v in properties[key].get("value", []) if v not in unwanted]
    if remaining:
        properties[key]["value"] = remaining
    else:
        del properties[key]


FLAG_INSTRUCTIONS: dict[str, Callable[[_FlagEdit, Instruction], None]] = {
    "turnFlagOn": _turn_flag_on,
    "turnFlagOff": _turn_flag_off,
    "addRule": _add_rule,
    "removeRule": _remove_rule,
    "reorderRules": _reorder_rules,
    "replaceRules": _replace_rules,
    "updateRuleVariationOrRollout": _update_rule_served,
    "updateRuleDescription": _update_rule_description,
    "updateRuleTrackEvents": _update_rule_track_events,
    "addClauses": _add_clauses,
    "removeClauses": _remove_clauses,
    "updateClause": _update_clause,
    "addValuesToClause": _add_values_to_clause,
    "removeValuesFromClause": _remove_values_from_clause,
    "addTargets": _add_targets,
    "removeTargets": _remove_targets,
    "replaceTargets": _replace_targets,
    "clearTargets": _clear_targets,
    "addUserTargets": _add_user_targets,
    "removeUserTargets": _remove_user_targets,
    "replaceUserTargets": _replace_user_targets,
    "clearUserTargets": _clear_user_targets,
    "addPrerequisite": _add_prerequisite,
    "removePrerequisite": _remove_prerequisite,
    "updatePrerequisite": _update_prerequisite,
    "replacePrerequisites": _replace_prerequisites,
    "updateFallthroughVariationOrRollout": _update_fallthrough,
    "updateOffVariation": _update_off_variation,
    "updateDefaultVariation": _update_default_variation,
    "addVariation": _add_variation,
    "removeVariation": _remove_variation,
    "updateVariation": _update_variation,
    "updateTrackEvents": _update_track_events,
    "updateTrackEventsFallthrough": _update_track_events_fallthrough,
    "turnOnClientSideAvailability": _client_side(True),
    "turnOffClientSideAvailability": _client_side(False),
    "updateName": _update_name,
    "updateDescription": _update_description,
    "addTags": _add_tags,
    "removeTags": _remove_tags,
    "makeFlagPermanent": _setter("temporary", False),
    "makeFlagTemporary": _setter("temporary", True),
    "archiveFlag": _archive(True),
    "restoreFlag": _archive(False),
    "deprecateFlag": _deprecate(True),
    "restoreDeprecatedFlag": _deprecate(False),
    "deleteFlag": _delete_flag,
    "updateMaintainerMember": _update_maintainer_member,
    "updateMaintainerTeam": _update_maintainer_team,
    "removeMaintainer": _remove_maintainer,
    "addCustomProperties": _add_custom_properties,
    "removeCustomProperties": _remove_custom_properties,
    "replaceCustomProperties": _replace_custom_properties,
}
"""Every supported flag instruction kind, by LaunchDarkly's name."""
