"""What Flagstaff's SCIM service publishes about itself (RFC 7643 §5-§7), pure: the User and Group
schemas with the attributes it keeps, the two resource types, the service provider's
configuration, and the `Shape` PATCH reads from each schema. Attributes not listed are ignored
on input and never returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flagstaff_server.domain.scim_patch import Shape

USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"
SCHEMA_URN = "urn:ietf:params:scim:schemas:core:2.0:Schema"
RESOURCE_TYPE_URN = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
CONFIG_URN = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
LIST_URN = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"
SEARCH_URN = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
MAX_RESULTS = 200


def attribute(
    name: str,
    kind: str = "string",
    *,
    description: str,
    multi: bool = False,
    required: bool = False,
    case_exact: bool = False,
    mutability: str = "readWrite",
    uniqueness: str = "none",
    returned: str = "default",
    subs: Sequence[dict[str, Any]] = (),
    references: Sequence[str] = (),
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "name": name,
        "type": kind,
        "multiValued": multi,
        "description": description,
        "required": required,
        "caseExact": case_exact,
        "mutability": mutability,
        "returned": returned,
        "uniqueness": uniqueness,
    }
    if subs:
        found["subAttributes"] = list(subs)
    if references:
        found["referenceTypes"] = list(references)
    return found


def member_subs(what: str, mutability: str) -> list[dict[str, Any]]:
    return [
        attribute(
            "value",
            description=f"The {what}'s id",
            mutability=mutability,
            case_exact=True,
            required=True,
        ),
        attribute(
            "$ref",
            "reference",
            description=f"The {what}'s URI",
            mutability=mutability,
            references=["User"] if what == "member" else ["Group"],
        ),
        attribute("display", description=f"The {what}'s name", mutability="readOnly"),
    ]


USER_ATTRIBUTES = [
    attribute(
        "userName",
        description="Unique identifier from the identity provider",
        required=True,
        uniqueness="server",
    ),
    attribute(
        "name",
        "complex",
        description="The member's name",
        subs=[
            attribute("formatted", description="The full name"),
            attribute("familyName", description="Family name (the member's lastName)"),
            attribute("givenName", description="Given name (the member's firstName)"),
        ],
    ),
    attribute("displayName", description="The name shown for the member"),
    attribute(
        "emails",
        "complex",
        multi=True,
        description="Email addresses; the primary (else the first) is the member's email",
        required=True,
        subs=[
            attribute("value", description="An email address", required=True),
            attribute("type", description="work, home or other"),
            attribute("primary", "boolean", description="The member's email"),
        ],
    ),
    attribute("active", "boolean", description="false deactivates the member and ends its access"),
    attribute(
        "groups",
        "complex",
        multi=True,
        description="The teams the member is in (changed through Groups)",
        mutability="readOnly",
        subs=member_subs("group", "readOnly"),
    ),
]
GROUP_ATTRIBUTES = [
    attribute("displayName", description="The team's name", required=True),
    attribute(
        "members",
        "complex",
        multi=True,
        description="The team's members (Users)",
        subs=member_subs("member", "immutable"),
    ),
]
COMMON = [
    attribute(
        "externalId",
        description="The identity provider's id for the resource",
        case_exact=True,
    ),
]


def schema_document(urn: str, name: str, attributes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schemas": [SCHEMA_URN],
        "id": urn,
        "name": name,
        "description": f"{name} (Flagstaff keeps the attributes listed)",
        "attributes": attributes,
        "meta": {"resourceType": "Schema", "location": f"/scim/v2/Schemas/{urn}"},
    }


SCHEMAS = {
    USER_URN: schema_document(USER_URN, "User", [*USER_ATTRIBUTES, *COMMON]),
    GROUP_URN: schema_document(GROUP_URN, "Group", [*GROUP_ATTRIBUTES, *COMMON]),
}
RESOURCE_TYPES = {
    name: {
        "schemas": [RESOURCE_TYPE_URN],
        "id": name,
        "name": name,
        "endpoint": f"/{name}s",
        "description": f"{name}s ({what} in Flagstaff)",
        "schema": urn,
        "schemaExtensions": [],
        "meta": {"resourceType": "ResourceType", "location": f"/scim/v2/ResourceTypes/{name}"},
    }
    for name, urn, what in (("User", USER_URN, "members"), ("Group", GROUP_URN, "teams"))
}
SERVICE_PROVIDER_CONFIG = {
    "schemas": [CONFIG_URN],
    "patch": {"supported": True},
    "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
    "filter": {"supported": True, "maxResults": MAX_RESULTS},
    "changePassword": {"supported": False},
    "sort": {"supported": False},
    "etag": {"supported": False},
    "authenticationSchemes": [
        {
            "type": "oauthbearertoken",
            "name": "SCIM token",
            "description": "A SCIM token made by an admin (POST /api/v2/scim/tokens), as "
            "`Authorization: Bearer <token>`",
            "specUri": "https://www.rfc-editor.org/rfc/rfc6750",
            "primary": True,
        }
    ],
    "meta": {"resourceType": "ServiceProviderConfig", "location": "/scim/v2/ServiceProviderConfig"},
}


def shape_of(urn: str) -> Shape:
    """PATCH's view of a schema: canonical names, multi-valued and read-only attributes."""
    attributes = SCHEMAS[urn]["attributes"]
    multi: set[str] = set()
    read_only: set[str] = {"id", "meta", "schemas"}
    names: dict[str, str] = {name: name for name in read_only}
    for item in attributes:
        names[item["name"].lower()] = item["name"]
        if item["multiValued"]:
            multi.add(item["name"])
        if item["mutability"] == "readOnly":
            read_only.add(item["name"])
        for sub in item.get("subAttributes", []):
            names[f"{item['name'].lower()}.{sub['name'].lower()}"] = sub["name"]
    return Shape(
        names=names, multi_valued=frozenset(multi), read_only=frozenset(read_only), urns=(urn,)
    )


USER_SHAPE = shape_of(USER_URN)
GROUP_SHAPE = shape_of(GROUP_URN)

__all__ = ["GROUP_SHAPE", "RESOURCE_TYPES", "SCHEMAS", "SERVICE_PROVIDER_CONFIG", "USER_SHAPE"]
