"""`flagstaff killswitch keygen|sign|sign-notice|push`: the break-glass path. Make an Ed25519 key
pair, sign an override (or the clear of one) or a status-page notice (or its clear) offline, and
hand the signed document to delivery nodes and relays, which apply it with the API, the database
and the feed down (docs/break-glass.md, docs/operations/regions.md "Status page").

Argument glue only: documents are built in `break_glass.document`, signed in
`break_glass.signing`; nodes verify them in `break_glass.switch`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from flagstaff_server.break_glass.document import (
    CLEAR,
    ENDPOINT,
    OFF,
    ON,
    OVERRIDE,
    Action,
    canonical_bytes,
    decode_document,
    unsigned_document,
)
from flagstaff_server.break_glass.notice_document import (
    decode_notice_document,
    unsigned_notice,
    unsigned_notice_clear,
)
from flagstaff_server.break_glass.peers import ROUTES
from flagstaff_server.break_glass.signing import (
    KeyFileError,
    generate_key_pair,
    key_id,
    load_private_key,
    sign,
)
from flagstaff_server.commands.error import CommandError
from flagstaff_server.errors import FlagstaffError

_DURATION = re.compile(r"^([1-9][0-9]{0,8})([smhd])$")
_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}

DESCRIPTION = """\
Break-glass kill switch: turn a flag off (or on, or to one variation) on delivery nodes and
relays directly, when the management API or its database cannot be reached. Nodes trust the
public keys in FLAGSTAFF_BREAK_GLASS_KEYS. See docs/break-glass.md. `sign-notice` signs a notice
for the nodes' status pages the same way (docs/operations/regions.md, "Status page").
"""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "killswitch",
        help="sign and push break-glass flag overrides (works with the control plane down)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="killswitch_command", required=True, metavar="COMMAND")

    keygen = commands.add_parser("keygen", help="make an Ed25519 key pair")
    keygen.add_argument("-o", "--output", type=Path, required=True, help="directory to write to")
    keygen.add_argument(
        "--name", default="break-glass", help="file names: NAME.key and NAME.pub (break-glass)"
    )
    keygen.set_defaults(run=run_keygen)

    signer = commands.add_parser("sign", help="sign an override (or a clear) offline")
    signer.add_argument("--key", type=Path, required=True, help="private key file (from keygen)")
    signer.add_argument("--project", required=True)
    signer.add_argument("--environment", required=True)
    signer.add_argument("--flag", required=True)
    action = signer.add_mutually_exclusive_group(required=True)
    action.add_argument("--off", action="store_true", help="serve the flag off")
    action.add_argument("--on", action="store_true", help="serve the flag on (its own targeting)")
    action.add_argument("--variation", type=int, help="serve variation N to everyone")
    action.add_argument("--clear", action="store_true", help="end the flag's override")
    signer.add_argument(
        "--expires",
        metavar="DURATION",
        help="the override stops applying after this long: 90s, 30m, 2h, 1d (default: never, "
        "until cleared)",
    )
    signer.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    signer.set_defaults(run=run_sign)

    notice = commands.add_parser(
        "sign-notice", help="sign a notice for the nodes' status pages (or its clear) offline"
    )
    notice.add_argument("--key", type=Path, required=True, help="private key file (from keygen)")
    what = notice.add_mutually_exclusive_group(required=True)
    what.add_argument("--title", help="the notice's heading (1-200 characters)")
    what.add_argument("--clear", metavar="NOTICE_ID", help="end the signed notice with this id")
    notice.add_argument("--message", default="", help="what to do about it")
    notice.add_argument("--severity", choices=("info", "warning", "critical"), default="warning")
    notice.add_argument(
        "--region", action="append", default=[], help="a region it concerns (repeat; none: all)"
    )
    notice.add_argument("--expires", metavar="DURATION", help="90s, 30m, 2h, 1d (default: never)")
    notice.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    notice.set_defaults(run=run_sign_notice)

    push = commands.add_parser("push", help="hand a signed document to delivery nodes/relays")
    push.add_argument(
        "--to",
        action="append",
        required=True,
        metavar="URL",
        help="a delivery node's or relay's base URL (repeat for several)",
    )
    push.add_argument("document", type=Path, help="the file `sign` wrote")
    push.add_argument("--timeout", type=float, default=10.0, help="seconds per node (10)")
    push.set_defaults(run=run_push)


def run_keygen(args: argparse.Namespace) -> int:
    directory: Path = args.output
    private_path = directory / f"{args.name}.key"
    public_path = directory / f"{args.name}.pub"
    for path in (private_path, public_path):
        if path.exists():
            raise CommandError(f"{path} exists; keygen never overwrites a key")
    pair = generate_key_pair()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pair.private_pem)
        public_path.write_bytes(pair.public_pem)
    except OSError as exc:
        raise CommandError(f"cannot write the key pair in {directory}: {exc.strerror}") from exc
    print(f"key id {pair.key_id}")
    print(f"private key {private_path} (keep it offline; mode 0600)")
    print(f"public key {public_path} (list it in FLAGSTAFF_BREAK_GLASS_KEYS on nodes and relays)")
    return 0


def parse_duration(text: str) -> int:
    """Milliseconds in a duration such as 90s, 30m, 2h or 1d."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise CommandError(f"--expires must be a number and s, m, h or d (e.g. 30m), got {text!r}")
    return int(match.group(1)) * _UNIT_MS[match.group(2)]


def run_sign(args: argparse.Namespace) -> int:
    try:
        private_key = load_private_key(args.key)
    except KeyFileError as exc:
        raise CommandError(str(exc)) from exc
    if args.clear and args.expires:
        raise CommandError("--expires applies to overrides, not to --clear")
    now = time.time_ns() // 1_000_000
    action: Action | None = None
    if not args.clear:
        action = OFF if args.off else ON if args.on else Action(on=True, variation=args.variation)
    document = unsigned_document(
        kind=CLEAR if args.clear else OVERRIDE,
        key_id=key_id(private_key.public_key()),
        project=args.project,
        environment=args.environment,
        flag=args.flag,
        issued_at=now,
        action=action,
        expires_at=None if not args.expires else now + parse_duration(args.expires),
    )
    document["signature"] = sign(private_key, canonical_bytes(document))
    try:
        decode_document(document)  # the same checks a node makes, before anyone relies on it
    except FlagstaffError as exc:
        raise CommandError(f"{exc.path}: {exc.message}") from exc
    return _write_document(document, args.output)


def run_sign_notice(args: argparse.Namespace) -> int:
    try:
        private_key = load_private_key(args.key)
    except KeyFileError as exc:
        raise CommandError(str(exc)) from exc
    signer = key_id(private_key.public_key())
    now = time.time_ns() // 1_000_000
    if args.clear is not None:
        if args.expires or args.message or args.region:
            raise CommandError("--clear takes no --message, --region or --expires")
        document = unsigned_notice_clear(key_id=signer, notice_id=args.clear, issued_at=now)
    else:
        document = unsigned_notice(
            key_id=signer,
            title=args.title,
            message=args.message,
            severity=args.severity,
            regions=tuple(args.region),
            issued_at=now,
            expires_at=None if not args.expires else now + parse_duration(args.expires),
        )
    document["signature"] = sign(private_key, canonical_bytes(document))
    try:
        decode_notice_document(document)  # the checks a node makes, before anyone relies on it
    except FlagstaffError as exc:
        raise CommandError(f"{exc.path}: {exc.message}") from exc
    return _write_document(document, args.output)


def _write_document(document: dict[str, Any], output: Path | None) -> int:
    text = json.dumps(document, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {output}: {exc.strerror or exc}") from exc
    return 0


def run_push(args: argparse.Namespace) -> int:
    try:
        body = args.document.read_bytes()
        document = json.loads(body)
    except OSError as exc:
        raise CommandError(f"cannot read {args.document}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CommandError(f"{args.document} is not JSON: {exc}") from exc
    kind = document.get("kind") if isinstance(document, dict) else None
    method, path = ROUTES.get(str(kind), ("POST", ENDPOINT))
    failed = 0
    with httpx.Client(timeout=args.timeout) as client:
        for url in args.to:
            target = url.rstrip("/") + path
            try:
                response = client.request(
                    method, target, content=body, headers={"content-type": "application/json"}
                )
            except httpx.HTTPError as exc:
                failed += 1
                print(f"{url}: unreachable: {exc}", file=sys.stderr)
                continue
            if response.is_success:
                print(f"{url}: {_accepted(response)}")
            else:
                failed += 1
                print(
                    f"{url}: refused {response.status_code}: {_problem(response)}", file=sys.stderr
                )
    if failed:
        raise CommandError(f"{failed} of {len(args.to)} nodes did not accept the document")
    return 0


def _accepted(response: httpx.Response) -> str:
    try:
        result = response.json()
        if "cleared" in result:  # a signed notice or its clear
            if result["cleared"] is not None:
                return f"accepted: notice {result['cleared']} cleared"
            return f"accepted: notice {result['notice']['_id']} shown"
        flag = f"{result['project']}/{result['environment']}/{result['flag']}"
        action = result["action"]
        served = "cleared" if action is None else json.dumps(action)
        return f"accepted: {flag} {served}, served version {result['servedVersion']}"
    except (ValueError, KeyError, TypeError):
        return f"accepted ({response.status_code})"


def _problem(response: httpx.Response) -> str:
    try:
        problem = response.json()
        where = f" at {problem['path']}" if problem.get("path") is not None else ""
        return f"{problem['message']}{where}"
    except (ValueError, KeyError, TypeError, AttributeError):
        return response.text[:200]
