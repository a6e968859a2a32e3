"""Semantic patch for segments: included/excluded targets by context kind (user keys live in
`included`/`excluded`), rules and clauses by `_id`, name, description and tags. All or nothing on a
copy; the result still needs `validate_segment_document` and `bump_segment_version`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flagstaff_server.domain.document import Document, IdFactory, clone, is_valid_context_kind
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
from flagstaff_server.domain.segment import fill_segment_ids
from flagstaff_server.domain.validation import TOTAL_WEIGHT, is_attribute_reference

USER = "user"
_Handler = Callable[[Document, Instruction, IdFactory], None]


def apply_segment_semantic_patch(
    document: Document, instructions: Any, *, now_ms: int, new_id: IdFactory
) -> SemanticPatchResult:
    """Apply segment instructions in order, all or nothing."""
    edited: Document = clone(document)
    for name in ("included", "excluded", "includedContexts", "excludedContexts", "rules"):
        edited.setdefault(name, [])
    for index, params in enumerate(check_instructions(instructions)):
        instruction = Instruction(index=index, params=params)
        handler = SEGMENT_INSTRUCTIONS.get(instruction.kind)
        if handler is None:
            raise instruction.error(f"unknown instruction kind {instruction.kind!r}", "kind")
        handler(edited, instruction, new_id)
    return SemanticPatchResult(document=fill_segment_ids(edited, new_id=new_id))


def _keys(document: Document, side: str, kind: str) -> list[str]:
    """The key list for `side` ('included' or 'excluded') and a context kind, created on demand."""
    if kind == USER:
        keys: list[str] = document[side]
        return keys
    for entry in document[f"{side}Contexts"]:
        if entry.get("contextKind") == kind:
            entry_keys: list[str] = entry.setdefault("values", [])
            return entry_keys
    entry = {"contextKind": kind, "values": []}
    document[f"{side}Contexts"].append(entry)
    new_keys: list[str] = entry["values"]
    return new_keys


def _targets(side: str, *, add: bool, users: bool) -> _Handler:
    other = "excluded" if side == "included" else "included"

    def apply(document: Document, instruction: Instruction, new_id: IdFactory) -> None:
        kind = USER if users else instruction.string("contextKind")
        if not is_valid_context_kind(kind):
            raise instruction.error(f"invalid context kind {kind!r}", "contextKind")
        values = instruction.strings("values")
        keys = _keys(document, side, kind)
        if add:
            opposite = _keys(document, other, kind)
            for position, value in enumerate(values):
                if value in opposite:
                    raise instruction.error(
                        f"{kind} key {value!r} would be both included and excluded",
                        f"values/{position}",
                    )
                if value not in keys:
                    keys.append(value)
        else:
            keys[:] = [key for key in keys if key not in values]
        for name in ("includedContexts", "excludedContexts"):
            document[name] = [entry for entry in document[name] if entry.get("values")]

    return apply


def _weight(instruction: Instruction, name: str) -> int:
    weight = instruction.integer(name)
    if not 0 <= weight <= TOTAL_WEIGHT:
        raise instruction.error(f"weight {weight} is outside 0..{TOTAL_WEIGHT}", name)
    return weight


def _add_rule(document: Document, instruction: Instruction, new_id: IdFactory) -> None:
    rule: dict[str, Any] = {"_id": new_id(), "clauses": read_clauses(instruction, new_id)}
    if instruction.has("description"):
        rule["description"] = instruction.string("description")
    if instruction.has("weight"):
        rule["weight"] = _weight(instruction, "weight")
    if instruction.has("bucketBy"):
        _set_bucket_by(rule, instruction)
    if instruction.has("rolloutContextKind"):
        rule["rolloutContextKind"] = instruction.string("rolloutContextKind")
        if not is_valid_context_kind(rule["rolloutContextKind"]):
            raise instruction.error("invalid context kind", "rolloutContextKind")
    insert_rule(document["rules"], rule, instruction)


def _update_rule_rollout(document: Document, instruction: Instruction, new_id: IdFactory) -> None:
    """LaunchDarkly's `weight` (absent: the whole match) and `contextKind`, plus `bucketBy`, which
    LaunchDarkly has no instruction for: a string sets it, null removes it, absent keeps it."""
    rule = find_rule(document["rules"], instruction)
    if instruction.has("weight"):
        rule["weight"] = _weight(instruction, "weight")
    else:
        rule.pop("weight", None)
    if instruction.has("contextKind"):
        kind = instruction.string("contextKind")
        if not is_valid_context_kind(kind):
            raise instruction.error(f"invalid context kind {kind!r}", "contextKind")
        rule["rolloutContextKind"] = kind
    if "bucketBy" in instruction.params:
        _set_bucket_by(rule, instruction)


def _set_bucket_by(rule: dict[str, Any], instruction: Instruction) -> None:
    if not instruction.has("bucketBy"):
        rule.pop("bucketBy", None)
        return
    bucket_by = instruction.string("bucketBy")
    if not is_attribute_reference(bucket_by):
        raise instruction.error(f"invalid attribute reference {bucket_by!r}", "bucketBy")
    rule["bucketBy"] = bucket_by


def _update_rule_description(
    document: Document, instruction: Instruction, new_id: IdFactory
) -> None:
    find_rule(document["rules"], instruction)["description"] = instruction.string("description")


def _update_name(document: Document, instruction: Instruction, new_id: IdFactory) -> None:
    document["name"] = instruction.string("value")


def _update_description(document: Document, instruction: Instruction, new_id: IdFactory) -> None:
    document["description"] = instruction.string("value")


SEGMENT_INSTRUCTIONS: dict[str, _Handler] = {
    "addIncludedTargets": _targets("included", add=True, users=False),
    "removeIncludedTargets": _targets("included", add=False, users=False),
    "addExcludedTargets": _targets("excluded", add=True, users=False),
    "removeExcludedTargets": _targets("excluded", add=False, users=False),
    "addIncludedUsers": _targets("included", add=True, users=True),
    "removeIncludedUsers": _targets("included", add=False, users=True),
    "addExcludedUsers": _targets("excluded", add=True, users=True),
    "removeExcludedUsers": _targets("excluded", add=False, users=True),
    "addRule": _add_rule,
    "removeRule": lambda d, i, n: remove_rule(d["rules"], i, missing_ok=True),
    "reorderRules": lambda d, i, n: reorder_rules(d["rules"], i),
    "addClauses": lambda d, i, n: add_clauses(d["rules"], i, n),
    "removeClauses": lambda d, i, n: remove_clauses(d["rules"], i),
    "updateClause": lambda d, i, n: update_clause(d["rules"], i, n),
    "addValuesToClause": lambda d, i, n: add_values_to_clause(d["rules"], i),
    "removeValuesFromClause": lambda d, i, n: remove_values_from_clause(d["rules"], i),
    "updateRuleDescription": _update_rule_description,
    "updateRuleRolloutAndContextKind": _update_rule_rollout,
    "updateName": _update_name,
    "updateDescription": _update_description,
    "addTags": lambda d, i, n: add_tags(d, i),
    "removeTags": lambda d, i, n: remove_tags(d, i),
}
"""Every supported segment instruction kind, by LaunchDarkly's name."""
