"""`flagstaff relay --config FILE`: run a relay (a regional edge in front of Flagstaff or any
LaunchDarkly-compatible service) under uvicorn.

Argument glue only: the configuration is read in `flagstaff_server.relay.config`, the relay is
assembled in `flagstaff_server.relay.edge`.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from flagstaff_server.break_glass import KeyFileError
from flagstaff_server.commands.error import CommandError
from flagstaff_server.commands.listener import bind_listeners
from flagstaff_server.commands.otel_start import start_telemetry
from flagstaff_server.commands.uvicorn_run import (
    add_run_options,
    configure_logging,
    run_until_stopped,
)
from flagstaff_server.relay.config import with_overrides
from flagstaff_server.relay.config_source import ENV_PREFIX
from flagstaff_server.settings import SettingsError
from flagstaff_server.telemetry.otel_config import otel_config

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
    add_run_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # the relay and its protocol imported here, not at the top: every `flagstaff` command
    # builds this parser (cli.py)
    from flagstaff_server.delivery.connection import protocol_for
    from flagstaff_server.relay.config_source import load_config
    from flagstaff_server.relay.edge import Relay

    try:
        config = with_overrides(
            load_config(args.config), host=args.host, port=args.port, data_dir=args.data_dir
        )
        otel = otel_config(os.environ)
    except SettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from exc
    configure_logging(args.log_level)
    telemetry = start_telemetry(otel, role="relay") if otel.enabled else None
    # the upstream connections' requests would log every poll at INFO
    logging.getLogger("httpx").setLevel(logging.WARNING)
    listeners = bind_listeners(config.host, config.port)
    # uvicorn names the address only for sockets it binds itself
    log.info("relay listening on http://%s:%d", config.host, config.port)
    try:
        relay = Relay(config)
    except KeyFileError as exc:
        raise CommandError(f"break_glass.keys: {exc}", exit_code=2) from exc
    if telemetry is not None:
        telemetry.observe_delivery(relay.node)  # a relay's delivery figures, as a node's
    try:
        run_until_stopped(
            relay.asgi,
            host=config.host,
            port=config.port,
            # delivery's connection protocol: SDK streams are served on the connection itself
            http=protocol_for(lambda: relay.node),
            listeners=listeners,
            args=args,
            what="relay",
            log=log,
        )
    finally:
        if telemetry is not None:
            telemetry.shutdown()
    return 0
