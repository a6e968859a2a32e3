"""`flagstaff serve`: run the server (management API, delivery, status) under uvicorn.

Argument glue only: settings come from here and the environment, the server is assembled in
`flagstaff_server.app`. uvicorn handles SIGTERM/SIGINT: it stops accepting, lets requests finish
(long-lived streams for at most `--shutdown-seconds`), then runs the app's shutdown.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.listener import bind_listeners
from flagstaff_server.commands.otel_start import start_telemetry
from flagstaff_server.commands.uvicorn_run import (
    add_run_options,
    configure_logging,
    run_until_stopped,
)
from flagstaff_server.settings import (
    ADMIN_TOKEN_ENV,
    ANALYTICS_DATABASE_ENV,
    CLIENT_EVALUATIONS_ENV,
    DATABASE_ENV,
    DEFAULT_HOST,
    DEFAULT_KEY_GRACE_SECONDS,
    DEFAULT_PORT,
    FEED_POLL_ENV,
    FULL_SENDS_ENV,
    HEARTBEAT_ENV,
    INGEST_DISK_BUDGET_ENV,
    INGEST_PROCESS_ENV,
    KEY_GRACE_ENV,
    MAX_CLIENT_STREAMS_ENV,
    MAX_CONNECTION_AGE_ENV,
    MAX_STREAMS_ENV,
    REDIS_ENV,
    REGION_ENV,
    ROLES,
    Settings,
    SettingsError,
)
from flagstaff_server.telemetry.otel_config import otel_config

log = logging.getLogger(__name__)

DESCRIPTION = """\
Run Flagstaff: the management API (/api/v2), the SDK delivery endpoints and /status, in one
process by default. The first start creates a demo project and, unless FLAGSTAFF_ADMIN_TOKEN is
set, an admin access token that is printed once and saved to DATA_DIR/admin-token (mode 0600).
"""

EPILOG = f"""\
environment: {ADMIN_TOKEN_ENV} (a value accepted as an admin access token), {DATABASE_ENV},
{REDIS_ENV}, {KEY_GRACE_ENV}; command-line options win over them. Tuning (README,
Configuration): {MAX_STREAMS_ENV}, {FULL_SENDS_ENV},
{MAX_CONNECTION_AGE_ENV}, {HEARTBEAT_ENV} (delivery);
{MAX_CLIENT_STREAMS_ENV}, {CLIENT_EVALUATIONS_ENV} (browser, mobile, OFREP);
{ANALYTICS_DATABASE_ENV}, {INGEST_DISK_BUDGET_ENV}, {INGEST_PROCESS_ENV}
(events); {REGION_ENV}, {FEED_POLL_ENV} (regions: docs/operations/regions.md).
exit status: 0 after a clean shutdown (SIGTERM or Ctrl-C); 1 when the server cannot start.
"""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="run the Flagstaff server",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"default {DEFAULT_HOST}")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path("data"),
        help="SQLite database, delivery snapshots and admin-token file (default ./data)",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        default=None,
        help="sqlite:///PATH or postgresql://... (default: SQLite in DATA_DIR/flagstaff.db)",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        default=None,
        help="redis://... for the change feed across processes (default: in-process)",
    )
    parser.add_argument(
        "--role", choices=ROLES, default="all", help="which planes this process serves"
    )
    parser.add_argument(
        "--key-grace-seconds",
        type=int,
        default=None,
        help=f"how long a reset SDK/mobile key keeps working (default {DEFAULT_KEY_GRACE_SECONDS})",
    )
    parser.add_argument(
        "--no-demo", action="store_true", help="do not create the demo project at first start"
    )
    add_run_options(parser)
    parser.set_defaults(run=run)


def announce(line: str) -> None:
    print(line, flush=True)


def run(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env(
            host=args.host,
            port=args.port,
            data_dir=args.data_dir,
            database_url=args.database,
            redis_url=args.redis,
            role=args.role,
            key_grace_seconds=args.key_grace_seconds,
            seed_demo=False if args.no_demo else None,
        )
        otel = otel_config(os.environ)
    except SettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from exc
    # The app (and SQLAlchemy, FastAPI, the stats stack) is imported only to serve: every other
    # `flagstaff` command builds this parser, and would otherwise spend seconds importing it.
    # Likewise the OpenTelemetry SDK, and only when the OTEL_* variables ask for an export.
    from flagstaff_server.app import Flagstaff
    from flagstaff_server.delivery.connection import protocol_for
    from flagstaff_server.ingest.connection import with_event_posts

    configure_logging(args.log_level)
    telemetry = start_telemetry(otel, role=settings.role) if otel.enabled else None
    listeners = bind_listeners(settings.host, settings.port)
    server = Flagstaff(settings, announce=announce, telemetry=telemetry)
    try:
        run_until_stopped(
            server.asgi,
            host=settings.host,
            port=settings.port,
            # Streams of known SDK keys (delivery/connection.py) and event POSTs of known
            # credentials (ingest/connection.py) are served on the connection itself, with no
            # ASGI task per stream or request; everything else goes to the ASGI app as usual.
            http=with_event_posts(
                protocol_for(lambda: server.delivery if server.ready else None),
                lambda: server.ingest.app if server.ingest is not None and server.ready else None,
            ),
            listeners=listeners,
            args=args,
            what="server",
            log=log,
        )
    finally:
        if telemetry is not None:
            telemetry.shutdown()  # exports what the last seconds recorded
    return 0
