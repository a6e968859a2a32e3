"""`flagstaff login` and `flagstaff logout`: check a token against the server, then keep the URL
and token in the user's config directory (`login_store`) for the flag-work commands.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from flagstaff_server.commands import api_client
from flagstaff_server.commands.exit_code import ExitCode
from flagstaff_server.commands.login_store import Login, remove_login, write_login
from flagstaff_server.commands.management_api import DEFAULT_URL


def register(subparsers: Any) -> None:
    login: argparse.ArgumentParser = subparsers.add_parser(
        "login", help="check an access token and store it for the flag-work commands"
    )
    login.add_argument("--url", default=DEFAULT_URL, help=f"server base URL ({DEFAULT_URL})")
    login.add_argument(
        "--token", default=None, help="access token (default: read from the terminal or stdin)"
    )
    login.set_defaults(run=run_login, output="table")
    logout: argparse.ArgumentParser = subparsers.add_parser(
        "logout", help="forget the stored login"
    )
    logout.set_defaults(run=run_logout)


def run_login(args: argparse.Namespace) -> int:
    token = args.token
    if token is None:
        token = getpass.getpass("token: ") if sys.stdin.isatty() else sys.stdin.readline()
    target = api_client.resolve(
        argparse.Namespace(url=args.url, token=token.strip() or None, output="table")
    )
    with api_client.connect(target) as client:
        who = api_client.request(client, "GET", "/api/v2/session")
    path = write_login(Login(url=target.url, token=target.token))
    print(f"signed in to {target.url} as {_name(who)}; token kept in {path} (mode 0600)")
    return ExitCode.OK


def _name(who: Any) -> str:
    if isinstance(who, dict):
        for field in ("email", "name", "role", "kind"):
            if who.get(field):
                return str(who[field])
    return "this token"


def run_logout(args: argparse.Namespace) -> int:
    print("login removed" if remove_login() else "no stored login")
    return ExitCode.OK
