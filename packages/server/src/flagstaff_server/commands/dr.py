"""`flagstaff dr`: disaster-recovery commands run against a database directly. `dr new-epoch`
starts a new database epoch after a restore from backup (docs/operations/regions.md), so that
feed positions and versions handed out from the lost history never come back with other content.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from flagstaff_server.adapters.sql.engine import database_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.commands.error import CommandError
from flagstaff_server.errors import FlagstaffError
from flagstaff_server.services.epochs import SEQ_GAP, VERSION_GAP, epoch_item, start_epoch
from flagstaff_server.services.ports import EpochRecord
from flagstaff_server.settings import Settings, SettingsError


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "dr", help="disaster recovery: database epochs", description=__doc__
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    new_epoch = actions.add_parser(
        "new-epoch",
        help="start a new database epoch (after restoring a backup)",
        description="Start a new epoch: change seqs continue "
        f"{SEQ_GAP:,} higher and every flag and segment version moves {VERSION_GAP:,} on, so "
        "delivery nodes that saw the lost changes resynchronise and SDKs never see a "
        "version reused.",
    )
    add_database_options(new_epoch)
    new_epoch.add_argument(
        "--reason", default="restore", help="recorded with the epoch (default: restore)"
    )
    new_epoch.add_argument(
        "--output", choices=("text", "json"), default="text", help="text (default) or JSON"
    )
    new_epoch.set_defaults(run=run_new_epoch)


def add_database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", metavar="URL", default=None, help="as for serve")
    parser.add_argument(
        "--data-dir", type=Path, default=Path("data"), help="as for serve (default ./data)"
    )


def open_database(args: argparse.Namespace) -> SqlStore:
    """The store the arguments name; an existing database only (a typo must not create one)."""
    try:
        settings = Settings.from_env(data_dir=args.data_dir, database_url=args.database)
        url = settings.resolved_database_url
        parsed = database_url(url)
    except SettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from exc
    except FlagstaffError as exc:
        raise CommandError(exc.message, exit_code=2) from exc
    if parsed.get_backend_name() == "sqlite" and not Path(str(parsed.database)).is_file():
        raise CommandError(f"no database at {parsed.database}")
    try:
        return SqlStore(url)
    except FlagstaffError as exc:
        raise CommandError(exc.message) from exc


def run_new_epoch(args: argparse.Namespace) -> int:
    reason = args.reason.strip()
    if not reason:
        raise CommandError("--reason must not be empty", exit_code=2)
    store = open_database(args)
    try:
        record = start_epoch(store, reason)
    except FlagstaffError as exc:
        raise CommandError(exc.message) from exc
    finally:
        store.close()
    print(render_epoch(record, args.output))
    return 0


def render_epoch(record: EpochRecord, output: str) -> str:
    if output == "json":
        return json.dumps({**epoch_item(record), "nextSeq": record.started_after_seq + SEQ_GAP + 2})
    timeline = "" if record.timeline is None else f" on timeline {record.timeline}"
    return (
        f"epoch {record.epoch} started{timeline} ({record.reason}) after seq "
        f"{record.started_after_seq}: new changes are numbered from "
        f"{record.started_after_seq + SEQ_GAP + 2}, flag and segment versions moved "
        f"{VERSION_GAP} on"
    )
