"""Semantic patch for flags, the rules family: targeting rules of one environment and their
clauses, named by `_id`; `replaceRules` keeps the ids a client gives and makes the others.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.flag_edit import FlagEdit, FlagHandler
from flagstaff_server.domain.instruction import (
    Instruction,
    add_clauses,
    add_values_to_clause,
    find_rule,
    insert_rule,
    read_clauses,
    remove_clauses,
    remove_rule,
    remove_values_from_clause,
    reorder_rules,
    update_clause,
)
from flagstaff_server.errors import ValidationError


def _new_rule(edit: FlagEdit, instruction: Instruction) -> dict[str, Any]:
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


def _add_rule(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    insert_rule(config["rules"], _new_rule(edit, instruction), instruction)


def _remove_rule(edit: FlagEdit, instruction: Instruction) -> None:
    remove_rule(edit.config(instruction)["rules"], instruction, missing_ok=False)


def _reorder_rules(edit: FlagEdit, instruction: Instruction) -> None:
    reorder_rules(edit.config(instruction)["rules"], instruction)


def _replace_rules(edit: FlagEdit, instruction: Instruction) -> None:
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


def _update_rule_served(edit: FlagEdit, instruction: Instruction) -> None:
    rule = find_rule(edit.config(instruction)["rules"], instruction)
    served = edit.served(instruction)
    rule.pop("variation", None)
    rule.pop("rollout", None)
    rule.update(served)


def _update_rule_description(edit: FlagEdit, instruction: Instruction) -> None:
    find_rule(edit.config(instruction)["rules"], instruction)["description"] = instruction.string(
        "description"
    )


def _update_rule_track_events(edit: FlagEdit, instruction: Instruction) -> None:
    find_rule(edit.config(instruction)["rules"], instruction)["trackEvents"] = instruction.boolean(
        "trackEvents"
    )


def _add_clauses(edit: FlagEdit, instruction: Instruction) -> None:
    add_clauses(edit.config(instruction)["rules"], instruction, edit.new_id)


def _remove_clauses(edit: FlagEdit, instruction: Instruction) -> None:
    remove_clauses(edit.config(instruction)["rules"], instruction)


def _update_clause(edit: FlagEdit, instruction: Instruction) -> None:
    update_clause(edit.config(instruction)["rules"], instruction, edit.new_id)


def _add_values_to_clause(edit: FlagEdit, instruction: Instruction) -> None:
    add_values_to_clause(edit.config(instruction)["rules"], instruction)


def _remove_values_from_clause(edit: FlagEdit, instruction: Instruction) -> None:
    remove_values_from_clause(edit.config(instruction)["rules"], instruction)


RULE_INSTRUCTIONS: dict[str, FlagHandler] = {
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
}
"""The rule and clause instruction kinds, by LaunchDarkly's name."""
