"""Running a root ASGI app under uvicorn for `flagstaff serve` and `flagstaff relay`: their shared
options, log format, stop signals and the did-it-start check. Knows nothing of what the app
serves; each command builds its app, its `http=` protocol and its listening sockets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys

import uvicorn

from flagstaff_server.commands.error import CommandError
from flagstaff_server.http.root import RootApp

LOG_LEVELS = ("debug", "info", "warning")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """`--shutdown-seconds` and `--log-level`, which `run_until_stopped` reads."""
    parser.add_argument(
        "--shutdown-seconds",
        type=float,
        default=5.0,
        help="on shutdown, wait this long for open connections (streams) before closing them",
    )
    parser.add_argument("--log-level", default="info", choices=LOG_LEVELS)


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if logging.getLogger().level > logging.DEBUG:
        # Alembic narrates every migration step at INFO, pushing the start banner off screen;
        # its warnings and errors still show, and --log-level debug brings the steps back
        logging.getLogger("alembic").setLevel(logging.WARNING)


def run_until_stopped(
    app: RootApp,
    *,
    host: str,
    port: int,
    http: type[asyncio.Protocol],
    listeners: list[socket.socket],
    args: argparse.Namespace,
    what: str,
    log: logging.Logger,
) -> None:
    """Serve `app` on `listeners` (closed afterwards) until SIGTERM or SIGINT; a `CommandError`
    naming `what` ("server", "relay") and the app's startup error when it did not start."""
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            loop="uvloop" if sys.platform != "win32" else "asyncio",
            http=http,
            lifespan="on",
            # Event endpoints send their own Date (SDKs read it as the server clock); uvicorn's
            # would make it a duplicate header, which clients join into an unparseable value.
            date_header=False,
            log_level=args.log_level,
            timeout_graceful_shutdown=args.shutdown_seconds,
            access_log=args.log_level == "debug",
        )
    )

    def note_stop_signal(signum: int, frame: object) -> None:
        log.info("%s handled: the %s has shut down", signal.Signals(signum).name, what)

    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal to the handler
    # that was installed before it; with this one the process ends with status 0 instead of
    # being killed by that signal after a clean shutdown.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, note_stop_signal)
    with contextlib.suppress(SystemExit):
        # uvicorn exits the process itself when startup fails; the reason is reported below
        server.run(sockets=listeners)
    for listener in listeners:
        listener.close()
    if not server.started:
        reason = app.startup_error or "see the log above"
        raise CommandError(f"the {what} did not start: {reason}")
