"""Import and export of LaunchDarkly's SDK data format (`{"flags": {...}, "segments": {...}}`) for
one environment: the migration path from LaunchDarkly and the way to take data out.

An import is checked whole with `flagstaff_core.decode_data` first and written in one transaction,
so a bad file changes nothing. Export answers exactly the SDK JSON delivery serves.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flagstaff_core import DecodeError, decode_data

from flagstaff_server.domain import (
    add_environment_to_flag,
    bump_segment_version,
    bump_versions,
    flag_change,
    flag_document_from_sdk,
    merge_sdk_flag,
    segment_document_from_sdk,
    to_sdk_flag,
    to_sdk_segment,
    validate_flag_document,
    validate_segment_document,
)
from flagstaff_server.errors import NotFound, ValidationError
from flagstaff_server.services import flags, segments
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.approval_gate import DIRECT
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis
from flagstaff_server.services.ports import (
    EnvironmentRecord,
    FlagRecord,
    JsonObject,
    SegmentRecord,
)
from flagstaff_server.services.race import retry_lost_races

# Segment fields a file carries no value for: an update keeps what the segment already has.
KEPT_SEGMENT_FIELDS = ("name", "description", "tags", "creationDate")


def new_import_id() -> str:
    return str(uuid.uuid4())


def check_data(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The live (not deleted) flags and segments of a data file, or a `ValidationError` naming the
    JSON path of the first problem."""
    try:
        decode_data(data)
    except DecodeError as exc:
        raise ValidationError(f"invalid data file: {exc.message}", path=exc.path) from exc
    live_flags = {
        key: item
        for key, item in (data.get("flags") or {}).items()
        if isinstance(item, dict) and not item.get("deleted")
    }
    live_segments = {
        key: item
        for key, item in (data.get("segments") or {}).items()
        if isinstance(item, dict) and not item.get("deleted")
    }
    return live_flags, live_segments


@dataclass(frozen=True, slots=True, kw_only=True)
class Title:
    """A name and description for a flag or segment a data file knows only by key."""

    name: str
    description: str = ""


def import_data(
    plane: ControlPlane, actor: Actor, project: str, environment: str, data: Any
) -> JsonObject:
    """Create or update every flag and segment of `data` in one environment, all or nothing.

    Flags new to the project are created with default (off) configurations in its other
    environments. Versions delivered to SDKs only go up: an item keeps the file's version when
    that is above the stored one.
    """
    return import_into(plane, actor, project, (environment,), data)


def import_into(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    environments: Sequence[str],
    data: Any,
    *,
    flag_titles: Mapping[str, Title] | None = None,
    segment_titles: Mapping[str, Title] | None = None,
) -> JsonObject:
    """`import_data` into several environments in one transaction: one audit entry per flag
    (covering every environment it was imported into) and one per segment of each environment.
    Titles name the flags and segments that are new to the project."""
    sdk_flags, sdk_segments = check_data(data)
    titles = Titles(flags=flag_titles or {}, segments=segment_titles or {})
    return retry_lost_races(
        lambda: write_data(plane, actor, project, environments, sdk_flags, sdk_segments, titles)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Titles:
    flags: Mapping[str, Title]
    segments: Mapping[str, Title]


def write_data(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    environments: Sequence[str],
    sdk_flags: dict[str, Any],
    sdk_segments: dict[str, Any],
    titles: Titles,
) -> JsonObject:
    with plane.write(actor) as tx:
        records = [environment_record(tx, project, environment) for environment in environments]
        project_environments = tx.uow.environments.list(project)
        # True for each flag or segment that is new, False for each updated one
        outcomes = [
            import_flag(tx, records, project_environments, key, sdk_flags[key], titles)
            for key in sorted(sdk_flags)
        ]
        outcomes += [
            import_segment(tx, record, key, sdk_segments[key], titles)
            for record in records
            for key in sorted(sdk_segments)
        ]
    created = sum(outcomes)
    updated = len(outcomes) - created
    return {
        "flags": len(sdk_flags),
        "segments": len(sdk_segments),
        "created": created,
        "updated": updated,
    }


def environment_record(tx: Transaction, project: str, environment: str) -> EnvironmentRecord:
    record = tx.uow.environments.get(project, environment)
    if record is None:
        segments.check_environment(tx.uow, project, environment)
        raise NotFound(f"no environment {environment!r} in project {project!r}")
    return record


def import_flag(
    tx: Transaction,
    environments: Sequence[EnvironmentRecord],
    project_environments: Sequence[EnvironmentRecord],
    key: str,
    sdk_flag: dict[str, Any],
    titles: Titles,
) -> bool:
    """Write one flag's configuration in each of `environments`; True when the flag is new."""
    project = environments[0].project
    existing = tx.uow.flags.get(project, key, for_update=True)
    if existing is None:
        # A new flag exists in every environment of the project: not for environment-scoped tokens.
        authorize(tx.actor, "writer", project=project)
    try:
        document = imported_flag(tx, existing, environments, project_environments, key, sdk_flag)
        if existing is None and key in titles.flags:
            document["name"] = titles.flags[key].name
            document["description"] = titles.flags[key].description
        # Imported data may hold what LaunchDarkly itself accepted and SDKs evaluate as
        # MALFORMED_FLAG; the file already passed the SDK decoder, so only shapes are checked.
        validate_flag_document(document, strict=False)
    except ValidationError as exc:
        path = f"/flags/{key}{exc.path or ''}"
        raise ValidationError(f"flag {key!r}: {exc.message}", path=path) from exc
    before = None if existing is None else existing.doc
    if existing is None:
        check_import(tx, project, None, document, [env.key for env in environments])
        tx.uow.flags.add(FlagRecord(project=project, key=key, version=1, doc=document))
        announced = [environment.key for environment in project_environments]
    else:
        bump = bump_versions(existing.doc, document, epoch_millis(tx.now))
        if not bump.changed:
            return False
        document = bump.document
        for environment in environments:
            config = document["environments"][environment.key]
            config["version"] = max(int(config["version"]), file_version(sdk_flag))
        check_import(tx, project, existing.doc, document, bump.changed_environments)
        flags.store_flag(tx, existing, document)
        announced = list(bump.changed_environments)
    tx.audit(
        kind="flag",
        resource=flags.resource_of(project, key, flag_change(before, document).environment),
        action="importFlag",
        before=before,
        after=document,
    )
    for environment_key in announced:
        flags.announce(tx, project, document, environment_key)
    return existing is None


def check_import(
    tx: Transaction,
    project: str,
    before: JsonObject | None,
    after: JsonObject,
    environments: Sequence[str],
) -> None:
    """An import into an environment that requires approval is refused unless the actor may
    bypass approvals; an import file carries no comment, so none is asked for."""
    flags.check_flag_change(
        tx,
        project,
        before,
        after,
        environments,
        comment=None,
        clearance=DIRECT,
        comment_required=False,
    )


def imported_flag(
    tx: Transaction,
    existing: FlagRecord | None,
    environments: Sequence[EnvironmentRecord],
    project_environments: Sequence[EnvironmentRecord],
    key: str,
    sdk_flag: dict[str, Any],
) -> JsonObject:
    """The flag with each of `environments` configured as `sdk_flag` says (not yet validated,
    versions not bumped): a new flag gets default configurations in the project's others."""
    now_ms = epoch_millis(tx.now)
    document = None if existing is None else existing.doc
    for environment in environments:
        if document is None:
            document = flag_document_from_sdk(
                sdk_flag,
                environment_key=environment.key,
                environment_name=environment.name,
                now_ms=now_ms,
                new_id=new_import_id,
                key=key,
            )
            for other in project_environments:
                if other.key not in document["environments"]:
                    document = add_environment_to_flag(
                        document, other.key, other.name, now_ms=now_ms, new_id=new_import_id
                    )
        else:
            document = merge_sdk_flag(
                document,
                sdk_flag,
                environment_key=environment.key,
                environment_name=environment.name,
                now_ms=now_ms,
                new_id=new_import_id,
            )
    assert document is not None, "an import names at least one environment"
    if existing is None:
        for environment in environments:
            config = document["environments"][environment.key]
            config["version"] = max(int(config["version"]), file_version(sdk_flag))
    return document


def file_version(sdk_item: dict[str, Any]) -> int:
    return int(sdk_item.get("version") or 0)


def import_segment(
    tx: Transaction,
    environment: EnvironmentRecord,
    key: str,
    sdk_segment: dict[str, Any],
    titles: Titles,
) -> bool:
    """Write one segment of `environment`; True when it is new."""
    project = environment.project
    now_ms = epoch_millis(tx.now)
    existing = tx.uow.segments.get(project, environment.key, key, for_update=True)
    try:
        document = segment_document_from_sdk(
            sdk_segment, now_ms=now_ms, new_id=new_import_id, key=key
        )
        if existing is not None:
            for name in KEPT_SEGMENT_FIELDS:
                if name in existing.doc:
                    document[name] = existing.doc[name]
            document["version"] = existing.doc.get("version", existing.version)
            bump = bump_segment_version(existing.doc, document, now_ms)
            if not bump.changed:
                return False
            document = bump.document
            document["version"] = max(
                int(document["version"]), int(sdk_segment.get("version") or 0)
            )
        elif key in titles.segments:
            document["name"] = titles.segments[key].name
            document["description"] = titles.segments[key].description
        validate_segment_document(document, strict=False)
    except ValidationError as exc:
        raise ValidationError(
            f"segment {key!r}: {exc.message}", path=f"/segments/{key}{exc.path or ''}"
        ) from exc
    record = SegmentRecord(
        project=project,
        environment=environment.key,
        key=key,
        version=int(document["version"]),
        doc=document,
    )
    segments.check_segment_change(
        tx,
        existing or record,
        document,
        comment=None,
        clearance=DIRECT,
        comment_required=False,
    )
    if existing is None:
        tx.uow.segments.add(record)
    else:
        segments.store_segment(tx, existing, record)
    tx.audit(
        kind="segment",
        resource=segments.resource_of(project, environment.key, key),
        action="importSegment",
        before=None if existing is None else existing.doc,
        after=document,
    )
    segments.announce(tx, project, environment.key, document)
    return existing is None


def export_data(plane: ControlPlane, project: str, environment: str) -> JsonObject:
    """The environment's flags and segments as the SDK data format delivery serves."""
    with plane.read() as uow:
        segments.check_environment(uow, project, environment)
        flag_records = uow.flags.list(project)
        segment_records = uow.segments.list(project, environment)
    return {
        "flags": {
            record.key: to_sdk_flag(record.doc, environment)
            for record in flag_records
            if environment in record.doc.get("environments", {})
        },
        "segments": {record.key: to_sdk_segment(record.doc) for record in segment_records},
    }
