"""`flagstaff user create`: add a local web UI account straight to the database (how the first
admin account is made). The password comes from stdin or is generated and printed once; it is
never taken from the command line, where other users of the machine could read it."""

from __future__ import annotations

import argparse
import secrets
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from flagstaff_server.adapters.clock import system_clock
from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.commands.error import CommandError
from flagstaff_server.errors import FlagstaffError
from flagstaff_server.services import accounts
from flagstaff_server.services.access import Actor
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.settings import Settings, SettingsError

CLI_ACTOR = Actor(token_id="flagstaff-cli", name="flagstaff user (command line)", role="admin")


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "user", help="manage local web UI accounts", description=__doc__
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create an account")
    create.add_argument("--email", required=True, help="the account's sign-in name")
    create.add_argument(
        "--role",
        choices=("reader", "writer", "admin"),
        default="admin",
        help="what the account may do, as for access tokens (default admin)",
    )
    create.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from the first line of stdin (default: generate and print one)",
    )
    create.add_argument(
        "--data-dir", type=Path, default=Path("data"), help="as for serve (default ./data)"
    )
    create.add_argument("--database", metavar="URL", default=None, help="as for serve")
    create.set_defaults(run=run_create)


def run_create(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env(data_dir=args.data_dir, database_url=args.database)
    except SettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from exc
    generated = not args.password_stdin
    password = secrets.token_urlsafe(12) if generated else sys.stdin.readline().rstrip("\n")
    if settings.database_url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    # imported here, not at the top: every `flagstaff` command builds this parser (cli.py)
    from flagstaff_server.adapters.sql.store import SqlStore

    try:
        store = SqlStore(settings.resolved_database_url)
    except FlagstaffError as exc:
        raise CommandError(exc.message) from exc
    try:
        plane = ControlPlane(
            store=store, feed=InProcessChangeFeed(store), clock=system_clock, key_grace=timedelta(0)
        )
        request = accounts.AccountRequest(email=args.email, role=args.role, password=password)
        created = accounts.create_account(plane, CLI_ACTOR, request)
    except FlagstaffError as exc:
        where = f" ({exc.path.lstrip('/')})" if exc.path else ""
        raise CommandError(f"{exc.message}{where}") from exc
    finally:
        store.close()
    print(f"created {created['role']} account {created['email']}")
    if generated:
        print(f"password (shown once): {password}")
    return 0
