"""Evaluating every flag of an environment for one context, as LaunchDarkly's
`POST .../environments/{env}/flags/evaluate` answers: a debugging aid for people, not for SDKs.

Builds the environment's SDK data exactly as export (and delivery) sees it and hands it to
`flagstaff_core`; holds no evaluation rules of its own.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import ContextError, DecodeError, decode_context, decode_data, evaluate

from flagstaff_server.context_limits import check_context
from flagstaff_server.errors import StoreUnavailable, ValidationError
from flagstaff_server.services.imports import export_data
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import JsonObject


def evaluate_flags(
    plane: ControlPlane,
    project: str,
    environment: str,
    context: Any,
    *,
    limit: int | None = None,
    offset: int = 0,
) -> JsonObject:
    """`{items: [{key, name, _value, reason, _links}], totalCount, _links}` ordered by flag key."""
    check_context(context)  # the bounds delivery applies: a 400 naming the place
    try:
        evaluation_context = decode_context(context)
    except ContextError as exc:
        raise ValidationError(f"invalid context: {exc}", path="") from exc
    exported = export_data(plane, project, environment)
    try:
        data = decode_data(exported)
    except DecodeError as exc:  # stored flags are validated on write; this is a bug, not input
        raise StoreUnavailable(f"stored flag data does not decode: {exc}") from exc
    with plane.read() as uow:
        names = {
            record.key: record.doc.get("name", record.key) for record in uow.flags.list(project)
        }
    keys = sorted(data.flags)
    page = keys[offset:] if limit is None or limit < 0 else keys[offset : offset + limit]
    items = []
    for key in page:
        detail = evaluate(data.flags[key], evaluation_context, data).detail
        reason = detail.reason.to_json()
        if "ruleId" in reason:
            # LaunchDarkly's REST representation of this reason spells the field `ruleID`.
            reason["ruleID"] = reason["ruleId"]
        items.append(
            {
                "key": key,
                "name": names.get(key, key),
                "_value": detail.value,
                "variationIndex": detail.variation_index,
                "reason": reason,
                "_links": {
                    "self": {"href": f"/api/v2/flags/{project}/{key}", "type": "application/json"}
                },
            }
        )
    return {
        "items": items,
        "totalCount": len(keys),
        "_links": {
            "self": {
                "href": f"/api/v2/projects/{project}/environments/{environment}/flags/evaluate",
                "type": "application/json",
            }
        },
    }
