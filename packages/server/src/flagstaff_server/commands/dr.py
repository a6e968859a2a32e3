"""`flagstaff dr`: disaster-recovery commands run against a database directly (the API of the
failed region may be gone; docs/operations/regions.md has the runbook):

- `status`: where the database stands in replication (role, timeline, epoch, lag, standbys, the
  region holding the primary);
- `promote`: promote a hot standby (pg_promote), start the new epoch, record the region;
- `new-epoch`: start a new database epoch after a restore from backup, so that feed positions and
  versions handed out from the lost history never come back with other content.

Argument glue and rendering only; the use cases are in `services.failover` and `services.epochs`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flagstaff_server.adapters.clock import system_clock
from flagstaff_server.adapters.sql.engine import database_url
from flagstaff_server.commands.error import CommandError
from flagstaff_server.errors import FlagstaffError
from flagstaff_server.regions.region_status import render_database
from flagstaff_server.services import failover
from flagstaff_server.services.epochs import SEQ_GAP, VERSION_GAP, epoch_item, start_epoch
from flagstaff_server.services.ports import DatabaseState, EpochRecord
from flagstaff_server.settings import DATABASE_ENV, REGION_ENV, Settings, SettingsError

if TYPE_CHECKING:
    from flagstaff_server.adapters.sql.store import SqlStore

EPILOG = f"""\
environment: {DATABASE_ENV} (when neither --database nor --data-dir is given), {REGION_ENV}
(the region `promote` records; default local).
exit status: 0 on success; 1 when the database is missing, unreachable or refuses; 2 for bad
arguments.
"""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "dr",
        help="disaster recovery: database role and lag, promote a standby, database epochs",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    status = actions.add_parser(
        "status",
        help="the database's role, timeline, epoch, lag and standbys",
        description="Where the database stands in replication: primary, standby or embedded "
        "(SQLite), its timeline and epoch, a standby's lag and upstream, a primary's standbys, "
        "and which region holds the primary. Reads only.",
    )
    add_database_options(status)
    add_output_option(status)
    status.set_defaults(run=run_status)

    promote = actions.add_parser(
        "promote",
        help="promote a hot standby to primary",
        description="Promote the hot standby behind --database (pg_promote, waiting for it to "
        "finish), start the new epoch and record this region as the primary's; the region's "
        "API takes writes at once, with no restart. On a primary it only makes sure of the "
        "epoch and the record. Needs a superuser, or EXECUTE on pg_promote.",
    )
    add_database_options(promote)
    promote.add_argument(
        "--region",
        default=None,
        help=f"the region that now holds the primary (default: ${REGION_ENV}, else local)",
    )
    promote.add_argument(
        "--wait-seconds",
        type=float,
        default=failover.DEFAULT_PROMOTE_WAIT_SECONDS,
        help="how long to wait for the promotion to finish (default 60)",
    )
    add_output_option(promote)
    promote.set_defaults(run=run_promote)

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
    add_output_option(new_epoch)
    new_epoch.set_defaults(run=run_new_epoch)


def add_database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", metavar="URL", default=None, help="as for serve")
    parser.add_argument(
        "--data-dir", type=Path, default=Path("data"), help="as for serve (default ./data)"
    )


def add_output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output", choices=("text", "json"), default="text", help="text (default) or JSON"
    )


def open_database(
    args: argparse.Namespace, *, migrate: bool = True, region: str = "local"
) -> SqlStore:
    """The store the arguments name; an existing database only (a typo must not create one).
    `migrate=False` for a database that may be a standby, or of another Flagstaff version."""
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
    # imported here, not at the top: every `flagstaff` command builds this parser (cli.py)
    from flagstaff_server.adapters.sql.store import SqlStore

    try:
        return SqlStore(url, migrate=migrate, region=region)
    except FlagstaffError as exc:
        raise CommandError(exc.message) from exc


def run_status(args: argparse.Namespace) -> int:
    store = open_database(args, migrate=False)
    try:
        state = failover.database_status(store)
    except FlagstaffError as exc:
        raise CommandError(exc.message) from exc
    finally:
        store.close()
    write(args.output, report(state))
    return 0


def run_promote(args: argparse.Namespace) -> int:
    if not args.wait_seconds > 0:
        raise CommandError("--wait-seconds must be above 0", exit_code=2)
    try:
        region = Settings.from_env(region=args.region).region
    except SettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from exc
    store = open_database(args, migrate=False, region=region)
    try:
        promotion = failover.promote(
            store, region=region, clock=system_clock, wait_seconds=args.wait_seconds
        )
    except FlagstaffError as exc:
        raise CommandError(exc.message) from exc
    finally:
        store.close()
    write(args.output, {"promoted": promotion.promoted, **report(promotion.state)})
    return 0


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


# rendering ----------------------------------------------------------------------------------


def report(state: DatabaseState) -> dict[str, Any]:
    """The JSON object `status` and `promote` print (a stable contract for scripts)."""
    return {"database": render_database(state), "primaryRegion": state.primary_region}


def write(output: str, body: dict[str, Any]) -> None:
    if output == "json":
        sys.stdout.write(json.dumps(body, indent=2, sort_keys=True) + "\n")
        return
    sys.stdout.write("".join(line + "\n" for line in state_lines(body)))


def state_lines(body: dict[str, Any]) -> list[str]:
    database = body["database"]
    rows: list[tuple[str, object]] = []
    if "promoted" in body:
        rows.append(("promoted", "yes" if body["promoted"] else "no (already a primary)"))
    rows += [
        ("role", database["role"]),
        ("timeline", database["timeline"]),
        ("epoch", database["epoch"]),
        ("primary region", body["primaryRegion"] or "(not recorded)"),
    ]
    if database["role"] == "standby":
        receiving = "streaming" if database["receiving"] else "not receiving"
        rows.append(("upstream", f"{database['upstream'] or '(none)'} ({receiving})"))
        rows.append(("lag (seconds)", database["replicationLagSeconds"]))
    lines = [f"{name:<16}{shown(value)}" for name, value in rows]
    standbys = database.get("standbys")
    if standbys is None:
        return lines
    lines.append(f"{'standbys':<16}{len(standbys) or '(none)'}")
    if standbys:
        fields = ("name", "address", "state", "replayLagSeconds", "lagBytes")
        cells: list[tuple[str, ...]] = [("name", "address", "state", "replay lag s", "lag bytes")]
        cells += [tuple(shown(standby[field]) for field in fields) for standby in standbys]
        widths = [max(len(row[i]) for row in cells) for i in range(len(fields))]
        lines += [
            "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            for row in cells
        ]
    return lines


def shown(value: object) -> str:
    return "-" if value is None else str(value)


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
