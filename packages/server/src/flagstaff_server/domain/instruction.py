"""Semantic patch plumbing shared by flags and segments: the request envelope, typed reading of an
instruction's parameters (errors point at `/instructions/<i>/<param>`), and the rule and clause
edits both resources support. Knows nothing of variations or targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.clause_validation import validate_clause
from flagstaff_server.domain.document import (
    Document,
    IdFactory,
    clone,
    json_equal,
    require_comment,
)
from flagstaff_server.errors import InvalidInput, ValidationError


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticPatch:
    """A parsed semantic patch body: `{"comment"?, "environmentKey"?, "instructions": [...]}`."""

    comment: str | None
    environment_key: str | None
    instructions: list[dict[str, Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticPatchResult:
    """The edited document; `delete` is set by `deleteFlag`, which the service carries out."""

    document: Document
    delete: bool = False


def parse_semantic_patch_body(body: Any) -> SemanticPatch:
    if not isinstance(body, dict):
        raise InvalidInput("a semantic patch must be a JSON object", path="/")
    comment = require_comment(body)
    environment_key = body.get("environmentKey")
    if environment_key is not None and not isinstance(environment_key, str):
        raise ValidationError("'environmentKey' must be a string", path="/environmentKey")
    return SemanticPatch(
        comment=comment,
        environment_key=environment_key,
        instructions=check_instructions(body.get("instructions")),
    )


def check_instructions(instructions: Any) -> list[dict[str, Any]]:
    """The instruction list, each an object with a string `kind`."""
    if not isinstance(instructions, list) or not instructions:
        raise ValidationError("'instructions' must be a non-empty array", path="/instructions")
    for index, instruction in enumerate(instructions):
        if not isinstance(instruction, dict):
            raise ValidationError(
                f"instruction {index} must be an object", path=f"/instructions/{index}"
            )
        if not isinstance(instruction.get("kind"), str):
            raise ValidationError(
                f"instruction {index} needs a string 'kind'", path=f"/instructions/{index}/kind"
            )
    return instructions


@dataclass(frozen=True, slots=True, kw_only=True)
class Instruction:
    """One instruction and its position, with typed accessors for its parameters."""

    index: int
    params: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.params["kind"])

    def path(self, name: str | None = None) -> str:
        return f"/instructions/{self.index}" + (f"/{name}" if name else "")

    def error(self, message: str, name: str | None = None) -> ValidationError:
        return ValidationError(
            f"instruction {self.index} ({self.kind}): {message}", path=self.path(name)
        )

    def nested(self, params: dict[str, Any]) -> Instruction:
        """One element of a list parameter (`rules`, `targets`, ...) read like an instruction."""
        return Instruction(index=self.index, params={"kind": self.kind, **params})

    def has(self, name: str) -> bool:
        return self.params.get(name) is not None

    def value(self, name: str) -> Any:
        if name not in self.params:
            raise self.error(f"'{name}' is required", name)
        return clone(self.params[name])

    def string(self, name: str) -> str:
        value = self.params.get(name)
        if not isinstance(value, str):
            raise self.error(f"'{name}' must be a string", name)
        return value

    def optional_string(self, name: str) -> str | None:
        return self.string(name) if self.has(name) else None

    def boolean(self, name: str) -> bool:
        value = self.params.get(name)
        if not isinstance(value, bool):
            raise self.error(f"'{name}' must be a boolean", name)
        return value

    def integer(self, name: str) -> int:
        value = self.params.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"'{name}' must be an integer", name)
        return value

    def strings(self, name: str) -> list[str]:
        value = self.params.get(name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(f"'{name}' must be an array of strings", name)
        return list(value)

    def values(self, name: str = "values") -> list[Any]:
        value = self.params.get(name)
        if not isinstance(value, list):
            raise self.error(f"'{name}' must be an array", name)
        result: list[Any] = clone(value)
        return result

    def objects(self, name: str) -> list[dict[str, Any]]:
        value = self.params.get(name)
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.error(f"'{name}' must be an array of objects", name)
        result: list[dict[str, Any]] = clone(value)
        return result

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.params.get(name)
        if not isinstance(value, dict):
            raise self.error(f"'{name}' must be an object", name)
        result: dict[str, Any] = clone(value)
        return result


def new_clause(given: Any, path: str, new_id: IdFactory) -> dict[str, Any]:
    """A REST clause from an instruction's clause object; `contextKind` defaults to user."""
    if not isinstance(given, dict):
        raise ValidationError("a clause must be an object", path=path)
    clause: dict[str, Any] = {
        "_id": new_id(),
        "contextKind": given.get("contextKind", "user"),
        "attribute": given.get("attribute"),
        "op": given.get("op"),
        "values": clone(given.get("values")),
        "negate": given.get("negate", False),
    }
    if given.get("op") == "segmentMatch" and clause["attribute"] is None:
        clause["attribute"] = ""
    validate_clause(clause, path)
    return clause


def read_clauses(
    instruction: Instruction, new_id: IdFactory, name: str = "clauses"
) -> list[dict[str, Any]]:
    given = instruction.params.get(name, [])
    if not isinstance(given, list):
        raise instruction.error(f"'{name}' must be an array", name)
    return [
        new_clause(clause, instruction.path(f"{name}/{i}"), new_id)
        for i, clause in enumerate(given)
    ]


def find_rule(rules: list[dict[str, Any]], instruction: Instruction) -> dict[str, Any]:
    rule_id = instruction.string("ruleId")
    for rule in rules:
        if rule.get("_id") == rule_id:
            return rule
    raise instruction.error(f"no rule with id {rule_id!r}", "ruleId")


def find_clause(rule: dict[str, Any], instruction: Instruction) -> dict[str, Any]:
    clause_id = instruction.string("clauseId")
    clauses: list[dict[str, Any]] = rule.get("clauses", [])
    for clause in clauses:
        if clause.get("_id") == clause_id:
            return clause
    raise instruction.error(
        f"rule {rule.get('_id')!r} has no clause with id {clause_id!r}", "clauseId"
    )


def insert_rule(
    rules: list[dict[str, Any]], rule: dict[str, Any], instruction: Instruction
) -> None:
    """Insert before `beforeRuleId` when given, else append."""
    if not instruction.has("beforeRuleId"):
        rules.append(rule)
        return
    before = instruction.string("beforeRuleId")
    for position, existing in enumerate(rules):
        if existing.get("_id") == before:
            rules.insert(position, rule)
            return
    raise instruction.error(f"no rule with id {before!r}", "beforeRuleId")


def remove_rule(rules: list[dict[str, Any]], instruction: Instruction, *, missing_ok: bool) -> None:
    rule_id = instruction.string("ruleId")
    kept = [rule for rule in rules if rule.get("_id") != rule_id]
    if len(kept) == len(rules) and not missing_ok:
        raise instruction.error(f"no rule with id {rule_id!r}", "ruleId")
    rules[:] = kept


def reorder_rules(rules: list[dict[str, Any]], instruction: Instruction) -> None:
    order = instruction.strings("ruleIds")
    by_id = {str(rule.get("_id")): rule for rule in rules}
    if sorted(order) != sorted(by_id) or len(set(order)) != len(order):
        raise instruction.error("'ruleIds' must list every rule id exactly once", "ruleIds")
    rules[:] = [by_id[rule_id] for rule_id in order]


def add_clauses(rules: list[dict[str, Any]], instruction: Instruction, new_id: IdFactory) -> None:
    rule = find_rule(rules, instruction)
    rule.setdefault("clauses", []).extend(read_clauses(instruction, new_id))


def remove_clauses(rules: list[dict[str, Any]], instruction: Instruction) -> None:
    rule = find_rule(rules, instruction)
    clause_ids = instruction.strings("clauseIds")
    existing = {clause.get("_id") for clause in rule.get("clauses", [])}
    for position, clause_id in enumerate(clause_ids):
        if clause_id not in existing:
            raise instruction.error(
                f"rule has no clause with id {clause_id!r}", f"clauseIds/{position}"
            )
    rule["clauses"] = [c for c in rule.get("clauses", []) if c.get("_id") not in clause_ids]


def update_clause(rules: list[dict[str, Any]], instruction: Instruction, new_id: IdFactory) -> None:
    rule = find_rule(rules, instruction)
    clause = find_clause(rule, instruction)
    replacement = new_clause(instruction.params.get("clause"), instruction.path("clause"), new_id)
    replacement["_id"] = clause["_id"]
    clause.clear()
    clause.update(replacement)


def add_values_to_clause(rules: list[dict[str, Any]], instruction: Instruction) -> None:
    clause = find_clause(find_rule(rules, instruction), instruction)
    values = clause.setdefault("values", [])
    for value in instruction.values():
        if not any(json_equal(value, existing) for existing in values):
            values.append(value)
    validate_clause(clause, instruction.path("values"))


def remove_values_from_clause(rules: list[dict[str, Any]], instruction: Instruction) -> None:
    clause = find_clause(find_rule(rules, instruction), instruction)
    unwanted = instruction.values()
    clause["values"] = [
        value
        for value in clause.get("values", [])
        if not any(json_equal(value, other) for other in unwanted)
    ]


def add_tags(document: Document, instruction: Instruction) -> None:
    document["tags"] = sorted(set(document.get("tags", [])) | set(instruction.strings("values")))


def remove_tags(document: Document, instruction: Instruction) -> None:
    document["tags"] = sorted(set(document.get("tags", [])) - set(instruction.strings("values")))
