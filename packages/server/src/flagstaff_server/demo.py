"""First start: the demo project (production and test, with the flags of
`docs/examples/demo-flags.json`), the initial admin token, and the banner that says where to go.

Runs once per store: later starts only read what is there to print the banner again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flagstaff_server.services import imports, projects, tokens
from flagstaff_server.services.access import SYSTEM
from flagstaff_server.services.imports import Title
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.settings import ADMIN_TOKEN_ENV, Settings

PROJECT = "demo"
ENVIRONMENT = "production"
ADMIN_TOKEN_FILE = "admin-token"

# The data file is LaunchDarkly's SDK format, which has no names or descriptions: they live here,
# one line each saying what the flag or segment shows off.
FLAG_TITLES: dict[str, Title] = {
    "payments-enabled": Title(
        name="Payments enabled",
        description="A kill switch: on, it serves true to everyone; new-dashboard needs it on "
        "(prerequisite).",
    ),
    "checkout-experiment": Title(
        name="Checkout experiment",
        description="A 50/50 experiment between the classic and one-page checkout; qa-olivia "
        "always gets one-page (individual target).",
    ),
    "staff-banner": Title(
        name="Staff banner",
        description="A targeting rule: true for users whose email ends in @flagstaff.example, "
        "false for everyone else.",
    ),
    "new-dashboard": Title(
        name="New dashboard",
        description="A segment rule behind a prerequisite: true for the beta-testers segment "
        "while payments-enabled serves true.",
    ),
}

SEGMENT_TITLES: dict[str, Title] = {
    "beta-testers": Title(
        name="Beta testers",
        description="Who tries features early: beta-ben and the acme org by key, anyone on the "
        "beta plan by rule; former-beta-fay is excluded even when the rule matches.",
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome:
    """What the banner reports: the demo environment's credentials, and the admin token's secret
    if it was created just now (it is never shown again)."""

    demo_sdk_key: str | None = None
    demo_mobile_key: str | None = None
    demo_client_side_id: str | None = None
    demo_flags: int = 0
    new_admin_token: str | None = None
    admin_token_file: Path | None = None


def demo_data_file() -> Path | None:
    """The demo flags in a source checkout (`make run`); absent from an installed wheel."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "docs" / "examples" / "demo-flags.json"
        if candidate.is_file():
            return candidate
    return None


# Audit kinds that mean the store has been used. Web UI accounts are not among them: the first
# admin account is made with `flagstaff user create`, possibly before the first start.
USE_KINDS = ("project", "environment", "flag", "segment", "token")


def is_first_start(plane: ControlPlane) -> bool:
    with plane.read() as uow:
        if uow.projects.list():
            return False
        return not any(uow.audit.list(kind=kind, limit=1) for kind in USE_KINDS)


def create_demo(plane: ControlPlane) -> None:
    projects.create_project(
        plane,
        SYSTEM,
        projects.ProjectRequest(
            key=PROJECT,
            name="Demo",
            description="Created at first start; delete it when you no longer need it.",
            tags=("demo",),
        ),
    )
    path = demo_data_file()
    if path is None:
        return
    data: Any = json.loads(path.read_text(encoding="utf-8"))
    # one write, so the audit log has one entry per flag and per segment of each environment
    imports.import_into(
        plane,
        SYSTEM,
        PROJECT,
        ("production", "test"),
        data,
        flag_titles=FLAG_TITLES,
        segment_titles=SEGMENT_TITLES,
    )


def write_secret(path: Path, secret: str) -> None:
    """Write `secret` readable by the owner only (created with mode 0600, never wider)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(secret + "\n")
    path.chmod(0o600)


def welcome(plane: ControlPlane, settings: Settings, *, writable: bool = True) -> Welcome:
    """Seed a new store (demo project, admin token) and collect what the banner shows. A store
    that is not `writable` (a hot standby) is only read: the primary region seeds it."""
    new_admin_token = None
    token_file = settings.data_dir / ADMIN_TOKEN_FILE
    if writable and settings.seed_demo and is_first_start(plane):
        create_demo(plane)
    if writable and settings.admin_token is None:
        new_admin_token = tokens.create_initial_admin_token(plane, SYSTEM, "initial admin token")
        if new_admin_token is not None:
            write_secret(token_file, new_admin_token)
    with plane.read() as uow:
        env = uow.environments.get(PROJECT, ENVIRONMENT)
        flag_count = len(uow.flags.list(PROJECT)) if env is not None else 0
    return Welcome(
        demo_sdk_key=env.sdk_key if env else None,
        demo_mobile_key=env.mobile_key if env else None,
        demo_client_side_id=env.client_side_id if env else None,
        demo_flags=flag_count,
        new_admin_token=new_admin_token,
        admin_token_file=token_file if token_file.exists() else None,
    )


def banner(settings: Settings, welcome: Welcome | None) -> list[str]:
    base = f"http://{settings.host}:{settings.port}"
    lines = [f"Flagstaff is running at {base} (role {settings.role})", f"  status: {base}/status"]
    if settings.serves_api:
        lines.append(f"  web UI: {base}/ui/ (sign in with the admin access token or an account)")
        lines.append(f"  management API: {base}/api/v2 (docs {base}/api/v2/docs)")
    if settings.serves_delivery:
        lines.append(f"  SDKs: point base, stream and events URIs at {base}")
    if welcome is None:
        return lines
    if welcome.demo_sdk_key is not None:
        lines += [
            f"  demo project {PROJECT!r}, environment {ENVIRONMENT!r} "
            f"({welcome.demo_flags} flags):",
            f"    SDK key:        {welcome.demo_sdk_key}",
            f"    mobile key:     {welcome.demo_mobile_key}",
            f"    client-side id: {welcome.demo_client_side_id}",
        ]
    if welcome.new_admin_token is not None:
        lines.append(
            f"  admin access token (shown once; saved to {welcome.admin_token_file}): "
            f"{welcome.new_admin_token}"
        )
    elif settings.admin_token is not None:
        lines.append(f"  admin access token: the value of {ADMIN_TOKEN_ENV}")
    elif welcome.admin_token_file is not None:
        lines.append(f"  admin access token: in {welcome.admin_token_file}")
    else:
        lines.append(
            f"  admin access token: set {ADMIN_TOKEN_ENV} and restart, or use a token you created"
        )
    return lines
