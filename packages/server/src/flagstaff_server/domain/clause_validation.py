"""Validation of clauses, shared by flag rules and segment rules: attribute, operator, context
kind and values (strict mode checks values against the operator: RE2 patterns, numbers, dates,
semantic versions), and the clauses and `_id` of a rule. Reads nothing but its arguments.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from flagstaff_core import pattern_error

from flagstaff_server.domain.document import (
    field,
    is_valid_context_kind,
    require_bool,
    require_list,
    require_object,
    require_string,
)
from flagstaff_server.domain.validation import check_value_depth, is_attribute_reference
from flagstaff_server.errors import ValidationError

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


def validate_rule_clauses(value: Any, path: str, ids: set[str], *, strict: bool) -> dict[str, Any]:
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
