"""Listing SCIM resources (RFC 7644 §3.4.2), pure: the query (filter, 1-based `startIndex`,
`count`, `attributes` / `excludedAttributes`) checked once, then applied to the resources' SCIM
JSON to give a ListResponse. `id` and `schemas` are always returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.scim_error import ScimInvalid
from flagstaff_server.domain.scim_filter import Filter, attribute_path, matches, parse_filter
from flagstaff_server.domain.scim_schema import LIST_URN, MAX_RESULTS

ALWAYS = frozenset({"id", "schemas"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    filter: Filter | None = None
    start_index: int = 1
    count: int = MAX_RESULTS
    attributes: frozenset[str] = frozenset()
    """Lowercased top-level names; empty: the default set."""
    excluded: frozenset[str] = frozenset()


def whole_number(text: str | None, name: str, default: int) -> int:
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise ScimInvalid(
            f"{name} must be a whole number", scim_type="invalidValue", path=f"/{name}"
        ) from None


def names_of(text: str | None, urn: str) -> frozenset[str]:
    if not text:
        return frozenset()
    return frozenset(
        attribute_path(part.strip(), (urn,)).split(".")[0] for part in text.split(",") if part
    )


def parse_query(params: Mapping[str, str | None], urn: str) -> Query:
    """The checked query; as RFC 7644 says, a `startIndex` below 1 is 1, and a negative
    `count` is 0; a `count` above the maximum is the maximum."""
    text = params.get("filter")
    start = whole_number(params.get("startIndex"), "startIndex", 1)
    count = whole_number(params.get("count"), "count", MAX_RESULTS)
    return Query(
        filter=parse_filter(text, (urn,)) if text else None,
        start_index=max(start, 1),
        count=min(max(count, 0), MAX_RESULTS),
        attributes=names_of(params.get("attributes"), urn),
        excluded=names_of(params.get("excludedAttributes"), urn),
    )


def project(resource: Mapping[str, Any], query: Query) -> dict[str, Any]:
    """The resource with only the attributes asked for (or without those excluded)."""
    if query.attributes:
        return {k: v for k, v in resource.items() if k.lower() in query.attributes | ALWAYS}
    return {k: v for k, v in resource.items() if k.lower() not in query.excluded or k in ALWAYS}


def list_response(resources: Sequence[Mapping[str, Any]], query: Query) -> dict[str, Any]:
    chosen = [r for r in resources if query.filter is None or matches(query.filter, r)]
    page = chosen[query.start_index - 1 : query.start_index - 1 + query.count]
    return {
        "schemas": [LIST_URN],
        "totalResults": len(chosen),
        "startIndex": query.start_index,
        "itemsPerPage": len(page),
        "Resources": [project(r, query) for r in page],
    }


__all__ = ["Query", "list_response", "parse_query", "project"]
