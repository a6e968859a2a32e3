"""`flagstaff relay --config FILE`: run a relay (a regional edge in front of Flagstaff or any
LaunchDarkly-compatible service) under uvicorn.

Argument glue only: the configuration is read in `flagstaff_server.relay.config`, the relay is
assembled in `flagstaff_server.relay.edge`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
from pathlib import Path
from typing import Any

import uvicorn

from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.listener import bind_listeners
from flagstaff_server.delivery.connection import protocol_for
from flagstaff_server.relay import Relay, load_config
from flagstaff_server.relay.config import ENV_PREFIX, with_overrides
from flagstaff_server.settings import SettingsError

log = logging.getLogger(__name__)

DESCRIPTION = """\
Run a Flagstaff relay: every SDK-facing endpoint (server, browser, mobile, OFREP, events) served
from memory for the environments in the configuration file, fed by one upstream connection per
environment (streaming, falling back to polling, failing over across upstream regions) or by
offline data files; kept on local disk (and optionally in Redis for daemon-mode SDKs), so a
restart serves at once even while upstream is down. See docs/relay.md.
"""

EPILOG = f"""\
environment: {ENV_PREFIX}* variables override the file, e.g. {ENV_PREFIX}UPSTREAM (comma
separated), {ENV_PREFIX}PORT, {ENV_PREFIX}REDIS_URL, {ENV_PREFIX}ENV_<NAME>_SDK_KEY.
exit status: 0 after a clean shutdown (SIGTERM or Ctrl-C); 2 for a bad configuration; 1 when the
relay cannot start.
"""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "relay",
        help="run a relay (regional edge) in front of Flagstaff or LaunchDarkly",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config", type=Path, default=None, help="TOML configuration file (see docs/relay.md)"
    )
    parser.add_argument("--host", default=None, help="overrides relay.host")
    parser.add_argument("--port", type=int, default=None, help="overrides relay.port")
    parser.add_argument("--data-dir", type=Path, default=None, help="overrides relay.data_dir")
    parser.add_argument(
        "--shutdown-seconds",
        type=float,
        default=5.0,
        help="on shutdown, wait this long for open connections (streams) before closing them",
    )
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    parser.set_defaults(run=run)


def note_stop_signal(signum: int, frame: object) -> None:
    log.info("%s handled: the relay has shut down", signal.Signals(signum).name)


def run(args: argparse.Namespace) -> int:
    try:
        config = with_overrides(
            load_config(args.config), host=args.host, port=args.port, data_dir=args.data_dir
        )
    except SettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from exc
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # the upstream connections' requests would log every poll at INFO
    logging.getLogger("httpx").setLevel(logging.WARNING)
    listeners = bind_listeners(config.host, config.port)
    # uvicorn names the address only for sockets it binds itself
    log.info("relay listening on http://%s:%d", config.host, config.port)
    relay = Relay(config)
    uvicorn_server = uvicorn.Server(
        uvicorn.Config(
            relay.asgi,
            host=config.host,
            port=config.port,
            loop="uvloop" if sys.platform != "win32" else "asyncio",
            # delivery's connection protocol: SDK streams are served on the connection itself
            http=protocol_for(lambda: relay.node),
            lifespan="on",
            # the event endpoints send their own Date; uvicorn's would duplicate it
            date_header=False,
            log_level=args.log_level,
            timeout_graceful_shutdown=args.shutdown_seconds,
            access_log=args.log_level == "debug",
        )
    )
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, note_stop_signal)
    with contextlib.suppress(SystemExit):
        uvicorn_server.run(sockets=listeners)
    for listener in listeners:
        listener.close()
    if not uvicorn_server.started:
        reason = relay.asgi.startup_error or "see the log above"
        raise CommandError(f"the relay did not start: {reason}")
    return 0
