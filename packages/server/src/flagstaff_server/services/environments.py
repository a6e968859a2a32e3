"""Environment use cases: create, read, edit, delete and reset keys, each audited, each announcing
the environment's credentials on the change feed (in the format `delivery.credential` owns) so
delivery nodes learn new and reset keys without reading the database.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from flagstaff_server.delivery.credential import environment_item
from flagstaff_server.domain.approval_settings import (
    RESOURCE_KINDS,
    check_approval_settings,
    check_resource_approval_settings,
    settings_json,
)
from flagstaff_server.domain.conversion import to_sdk_flag
from flagstaff_server.domain.flag import add_environment_to_flag, remove_environment_from_flag
from flagstaff_server.errors import NotFound
from flagstaff_server.services import field
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.plane import (
    ControlPlane,
    Transaction,
    epoch_millis,
    from_epoch_millis,
    new_id,
)
from flagstaff_server.services.ports import (
    EnvironmentRecord,
    FlagRecord,
    JsonObject,
    RetiredCredential,
    UnitOfWork,
)

KeyKind = Literal["sdk", "mobile"]

DEFAULT_COLOR = "417505"
DEFAULT_TTL = 0

# Editable REST fields and the rule each value must satisfy; the rest are read-only.
EDITABLE: Mapping[str, field.Rule] = {
    "name": field.check_name,
    "color": field.check_color,
    "defaultTtl": field.check_default_ttl,
    "secureMode": field.check_bool,
    "defaultTrackEvents": field.check_bool,
    "requireComments": field.check_bool,
    "confirmChanges": field.check_bool,
    "tags": field.check_tags,
    "critical": field.check_bool,
    "approvalSettings": check_approval_settings,
    "resourceApprovalSettings": check_resource_approval_settings,
}
READ_ONLY = ("_id", "key", "apiKey", "mobileKey")


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentRequest:
    """A create body; unset optional fields take LaunchDarkly's defaults."""

    key: str
    name: str
    color: str = DEFAULT_COLOR
    default_ttl: int = DEFAULT_TTL
    secure_mode: bool = False
    default_track_events: bool = False
    require_comments: bool = False
    confirm_changes: bool = False
    tags: tuple[str, ...] = ()
    critical: bool = False


def resource_of(project: str, environment: str) -> str:
    return f"proj/{project}:env/{environment}"


def path_of(project: str, environment: str) -> str:
    return f"/api/v2/projects/{project}/environments/{environment}"


def version_of(record: EnvironmentRecord) -> int:
    version = record.doc.get("_version", 1)
    return version if isinstance(version, int) else 1


def bumped(record: EnvironmentRecord) -> EnvironmentRecord:
    """The record one version up, as every change to an environment leaves it."""
    return replace(record, doc={**record.doc, "_version": version_of(record) + 1})


def represent(record: EnvironmentRecord) -> JsonObject:
    """LaunchDarkly's `Environment` shape."""
    doc = record.doc
    return {
        "_links": {
            "self": {"href": path_of(record.project, record.key), "type": "application/json"}
        },
        "_id": record.client_side_id,
        "key": record.key,
        "name": record.name,
        "apiKey": record.sdk_key,
        "mobileKey": record.mobile_key,
        "color": doc.get("color", DEFAULT_COLOR),
        "defaultTtl": doc.get("defaultTtl", DEFAULT_TTL),
        "secureMode": record.secure_mode,
        "defaultTrackEvents": doc.get("defaultTrackEvents", False),
        "requireComments": doc.get("requireComments", False),
        "confirmChanges": doc.get("confirmChanges", False),
        "tags": list(doc.get("tags", [])),
        "critical": doc.get("critical", False),
        "approvalSettings": settings_json(doc, "flag"),
        "resourceApprovalSettings": {kind: settings_json(doc, kind) for kind in RESOURCE_KINDS},
    }


def new_sdk_key() -> str:
    return f"sdk-{uuid.uuid4()}"


def new_mobile_key() -> str:
    return f"mob-{uuid.uuid4()}"


def check_request(request: EnvironmentRequest, path: str = "") -> None:
    field.check_key(request.key, f"{path}/key")
    field.check_name(request.name, f"{path}/name")
    field.check_color(request.color, f"{path}/color")
    field.check_default_ttl(request.default_ttl, f"{path}/defaultTtl")
    field.check_tags(list(request.tags), f"{path}/tags")


def announce(tx: Transaction, record: EnvironmentRecord, *, deleted: bool = False) -> None:
    tx.change(
        project=record.project,
        environment=record.key,
        kind="environment",
        key=record.key,
        version=version_of(record),
        item=None if deleted else environment_item(record),
    )


def new_flag_id() -> str:
    return str(uuid.uuid4())


def configure_flags(tx: Transaction, record: EnvironmentRecord) -> None:
    """Give every flag of the project its default configuration in the new environment (off,
    serving the flag's defaults) and tell delivery about each."""
    for flag in tx.uow.flags.list(record.project):
        document = add_environment_to_flag(
            flag.doc,
            record.key,
            record.name,
            now_ms=epoch_millis(tx.now),
            new_id=new_flag_id,
        )
        store_flag(tx, flag, document, environment=record.key)


def unconfigure_flags(tx: Transaction, record: EnvironmentRecord) -> None:
    """Drop the deleted environment's configuration from every flag of the project."""
    for flag in tx.uow.flags.list(record.project):
        if record.key in flag.doc.get("environments", {}):
            document = remove_environment_from_flag(flag.doc, record.key)
            store_flag(tx, flag, document, environment=None)


def store_flag(
    tx: Transaction, flag: FlagRecord, document: JsonObject, *, environment: str | None
) -> None:
    """Compare-and-set the flag one `_version` up; announce its configuration in `environment`."""
    version = flag.version + 1
    document["_version"] = version
    tx.uow.flags.replace(replace(flag, version=version, doc=document), flag.version)
    if environment is not None:
        config = document["environments"][environment]
        tx.change(
            project=flag.project,
            environment=environment,
            kind="flag",
            key=flag.key,
            version=config["version"],
            item=to_sdk_flag(document, environment),
        )


def add(tx: Transaction, project: str, request: EnvironmentRequest, path: str = "") -> JsonObject:
    """Create the environment inside `tx` (the project must exist); returns its representation."""
    check_request(request, path)
    if tx.uow.projects.get(project) is None:
        raise NotFound(f"no project {project!r}")
    record = EnvironmentRecord(
        project=project,
        key=request.key,
        name=request.name,
        sdk_key=new_sdk_key(),
        mobile_key=new_mobile_key(),
        client_side_id=new_id(),
        secure_mode=request.secure_mode,
        doc={
            "_version": 1,
            "color": request.color,
            "defaultTtl": request.default_ttl,
            "defaultTrackEvents": request.default_track_events,
            "requireComments": request.require_comments,
            "confirmChanges": request.confirm_changes,
            "tags": field.check_tags(list(request.tags), f"{path}/tags"),
            "critical": request.critical,
        },
        created=tx.now,
    )
    tx.uow.environments.add(record)
    announce(tx, record)
    configure_flags(tx, record)
    after = represent(record)
    tx.audit(
        kind="environment",
        resource=resource_of(project, record.key),
        action="createEnvironment",
        after=after,
    )
    return after


def get_record(uow: UnitOfWork, project: str, key: str) -> EnvironmentRecord:
    record = uow.environments.get(project, key)
    if record is None:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        raise NotFound(f"no environment {key!r} in project {project!r}")
    return record


def is_visible(actor: Actor, record: EnvironmentRecord) -> bool:
    """Whether `actor` may see the environment (and its keys) in listings."""
    return actor.may("reader", project=record.project, environment=record.key)


def visible(actor: Actor, records: list[EnvironmentRecord]) -> list[EnvironmentRecord]:
    return [record for record in records if is_visible(actor, record)]


def create_environment(
    plane: ControlPlane, actor: Actor, project: str, request: EnvironmentRequest
) -> JsonObject:
    authorize(actor, "admin", project=project)
    with plane.write(actor) as tx:
        return add(tx, project, request)


def list_environments(
    plane: ControlPlane, actor: Actor, project: str, *, limit: int | None, offset: int
) -> tuple[list[JsonObject], int]:
    """One page of the project's environments that `actor` may see, and their total count."""
    authorize(actor, "reader", project=project)
    with plane.read() as uow:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        records = visible(actor, uow.environments.list(project))
    page = records[offset:] if limit is None else records[offset : offset + limit]
    return [represent(record) for record in page], len(records)


def get_environment(plane: ControlPlane, actor: Actor, project: str, key: str) -> JsonObject:
    authorize(actor, "reader", project=project, environment=key)
    with plane.read() as uow:
        return represent(get_record(uow, project, key))


def editable_view(record: EnvironmentRecord) -> JsonObject:
    view = represent(record)
    del view["_links"]
    return view


def patched(record: EnvironmentRecord, body: Any) -> tuple[EnvironmentRecord, str | None, Any]:
    """The record after applying a JSON Patch (or merge patch) body to its representation; the
    comment and the patch itself for the audit log."""
    patched_fields = field.patch_fields(
        editable_view(record),
        body,
        editable=EDITABLE,
        read_only=READ_ONLY,
        required=EDITABLE,
        noun="environment",
    )
    values = patched_fields.values
    doc = dict(record.doc)
    doc.update(
        {name: values[name] for name in EDITABLE if name not in ("name", "secureMode")},
    )
    doc["_version"] = version_of(record) + 1
    result = replace(record, name=values["name"], secure_mode=values["secureMode"], doc=doc)
    return result, patched_fields.comment, patched_fields.patch


def patch_environment(
    plane: ControlPlane, actor: Actor, project: str, key: str, body: Any
) -> JsonObject:
    authorize(actor, "admin", project=project, environment=key)
    with plane.write(actor) as tx:
        record = get_record(tx.uow, project, key)
        updated, comment, patch = patched(record, body)
        tx.uow.environments.replace(updated)
        announce(tx, updated)
        after = represent(updated)
        tx.audit(
            kind="environment",
            resource=resource_of(project, key),
            action="updateEnvironment",
            comment=comment,
            patch=patch,
            before=represent(record),
            after=after,
        )
    return after


def remove(tx: Transaction, record: EnvironmentRecord) -> None:
    """Delete the environment inside `tx`: its segments go with it, flags lose its configuration,
    and delivery hears that it is gone."""
    unconfigure_flags(tx, record)
    tx.uow.environments.delete(record.project, record.key)
    announce(tx, bumped(record), deleted=True)
    tx.audit(
        kind="environment",
        resource=resource_of(record.project, record.key),
        action="deleteEnvironment",
        before=represent(record),
    )


def delete_environment(plane: ControlPlane, actor: Actor, project: str, key: str) -> None:
    authorize(actor, "admin", project=project, environment=key)
    with plane.write(actor) as tx:
        remove(tx, get_record(tx.uow, project, key))


def retire(
    retired: tuple[RetiredCredential, ...], old: RetiredCredential, now: datetime
) -> tuple[RetiredCredential, ...]:
    """The still-valid retired credentials plus `old`, unless `old` has already expired."""
    kept = tuple(item for item in retired if item.expires > now)
    return (*kept, old) if old.expires > now else kept


def reset_key(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    key: str,
    kind: KeyKind,
    *,
    expiry_ms: int | None = None,
) -> JsonObject:
    """Replace the SDK or mobile key. The old key keeps working until `expiry_ms` (epoch ms) when
    given, else for the configured grace period."""
    authorize(actor, "admin", project=project, environment=key)
    with plane.write(actor) as tx:
        record = get_record(tx.uow, project, key)
        expires = (
            from_epoch_millis(expiry_ms) if expiry_ms is not None else tx.now + plane.key_grace
        )
        if kind == "sdk":
            old = RetiredCredential(kind="sdk", value=record.sdk_key, expires=expires)
            updated = replace(record, sdk_key=new_sdk_key())
        else:
            old = RetiredCredential(kind="mobile", value=record.mobile_key, expires=expires)
            updated = replace(record, mobile_key=new_mobile_key())
        updated = bumped(replace(updated, retired=retire(record.retired, old, tx.now)))
        tx.uow.environments.replace(updated)
        announce(tx, updated)
        after = represent(updated)
        tx.audit(
            kind="environment",
            resource=resource_of(project, key),
            action="updateApiKey" if kind == "sdk" else "updateMobileKey",
            comment=f"old key valid until {epoch_millis(expires)} (epoch ms)",
            before=represent(record),
            after=after,
        )
    return after
