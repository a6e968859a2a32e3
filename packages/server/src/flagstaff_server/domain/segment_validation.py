"""Validation of REST segment documents; the first problem raises `ValidationError` with the JSON
pointer of the offending value. Strict mode also checks meaning: context kinds, a key both
included and excluded, rule weights and bucketing references. Reads nothing but its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flagstaff_server.domain.clause_validation import validate_rule_clauses
from flagstaff_server.domain.document import (
    Document,
    field,
    is_valid_context_kind,
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
    is_attribute_reference,
)
from flagstaff_server.errors import ValidationError


def validate_segment_document(document: Document, *, strict: bool = True) -> None:
    """Raise `ValidationError` (with `path`) for the first problem in a REST segment document."""
    _SegmentValidator(document, strict=strict).validate()


class _SegmentValidator:
    def __init__(self, document: Document, *, strict: bool):
        self.document = document
        self.strict = strict

    def validate(self) -> None:
        document = require_object(self.document, "")
        check_key(document, "segment", strict=self.strict)
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
            check_optional(document, name, check, "")
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
        rule = validate_rule_clauses(rule, path, ids, strict=self.strict)
        check_optional(rule, "description", check_text, path)
        check_optional(rule, "bucketBy", require_string, path)
        check_optional(rule, "rolloutContextKind", require_string, path)
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
