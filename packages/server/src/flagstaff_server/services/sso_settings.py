"""Single sign-on settings use cases: read them (admins), replace them (admins, audited with who
did it, the secret never in the entry), the public view the sign-in page asks (is there an SSO
button?), and whether SSO is required, which `services.sessions` asks before a password sign-in.
The rules are `domain.sso`'s; no HTTP here."""

from __future__ import annotations

from flagstaff_server.domain.sso import (
    SsoSettings,
    check_sso_settings,
    present_settings,
    settings_document,
    settings_of,
)
from flagstaff_server.errors import Forbidden, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.member_access import base_role_of, is_active
from flagstaff_server.services.plane import ControlPlane, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

SETTINGS_KEY = "settings"
AUDIT_KIND = "sso"
RESOURCE = "acct"


def stored_settings(uow: UnitOfWork) -> SsoSettings:
    record = uow.sso.get(ACCOUNT_WIDE, PROJECT_WIDE, SETTINGS_KEY)
    return settings_of(None if record is None else record.doc)


def is_break_glass(uow: UnitOfWork, account_id: str) -> bool:
    """The owner keeps a local password when SSO is required: the way in when the provider is
    down or misconfigured."""
    record = uow.accounts.get(account_id)
    return record is not None and base_role_of(record) == "owner"


def require_settings_admin(actor: Actor) -> None:
    authorize(actor, "admin")
    if actor.is_scoped:
        raise Forbidden("single sign-on settings need an unscoped admin")


def get_settings(plane: ControlPlane, actor: Actor) -> JsonObject:
    require_settings_admin(actor)
    with plane.read() as uow:
        return present_settings(stored_settings(uow))


def public_settings(plane: ControlPlane) -> JsonObject:
    """What the sign-in page may know before anyone signs in."""
    with plane.read() as uow:
        settings = stored_settings(uow)
    return {"enabled": settings.enabled, "required": settings.sso_required}


def put_settings(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    """Replace the settings. Every team the group mapping names must exist, and SSO can be
    required only while an active owner with a password exists to break the glass."""
    require_settings_admin(actor)
    with plane.write(actor) as tx:
        record = tx.uow.sso.get(ACCOUNT_WIDE, PROJECT_WIDE, SETTINGS_KEY)
        current = settings_of(None if record is None else record.doc)
        wanted = check_sso_settings(body, current)
        for group, team in wanted.group_teams.items():
            if tx.uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, team) is None:
                raise ValidationError(f"no team {team!r}", path=f"/groupTeams/{group}")
        if wanted.sso_required and not any(
            base_role_of(a) == "owner" and is_active(a) and a.password_hash
            for a in tx.uow.accounts.list()
        ):
            raise ValidationError(
                "requiring SSO needs an owner with a local password (the break-glass account)",
                path="/ssoRequired",
            )
        stored = KeyedRecord(
            id=new_id() if record is None else record.id,
            project=ACCOUNT_WIDE,
            environment=PROJECT_WIDE,
            key=SETTINGS_KEY,
            version=1 if record is None else record.version + 1,
            created=tx.now if record is None else record.created,
            doc=settings_document(wanted),
        )
        if record is None:
            tx.uow.sso.add(stored)
        else:
            tx.uow.sso.replace(stored, record.version)
        tx.audit(
            kind=AUDIT_KIND,
            resource=RESOURCE,
            action="updateSsoSettings",
            before=None if record is None else present_settings(current),
            after=present_settings(wanted),
        )
    return present_settings(wanted)
