"""`flagstaff gameday SCENARIO`: replay one phase of the October 2025 incident against a
two-region topology of real processes on this machine and report what users saw
(docs/operations/gameday.md); `flagstaff gameday --list` names the scenarios.

Argument glue and rendering only; the run is `flagstaff_server.gameday.runner`.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from flagstaff_server.commands.error import CommandError

EPILOG = """\
exit status: 0 when every check of the scenario passed; 1 when one failed or the run could not
start (PostgreSQL's server binaries are needed); 2 for bad arguments; 130 when interrupted
(the report of what ran is still written).
"""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "gameday",
        help="run a game-day scenario against a two-region topology and report",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("scenario", nargs="?", help="the scenario to run (see --list)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--clients", type=int, default=50, help="simulated clients (50)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of phases (30)")
    parser.add_argument(
        "--report", type=Path, default=Path("gameday-report"), help="directory for the report"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    parser.add_argument(
        "--work-dir", type=Path, help="where the topology's nodes keep data (a temporary dir)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from flagstaff_server.gameday.scenarios import SCENARIOS

    if args.list:
        for name, scenario in SCENARIOS.items():
            print(f"{name}\t{scenario.summary}")
        return 0
    if not args.scenario:
        raise CommandError("name a scenario (flagstaff gameday --list)", exit_code=2)
    if args.scenario not in SCENARIOS:
        raise CommandError(
            f"unknown scenario {args.scenario!r}; one of: {', '.join(SCENARIOS)}", exit_code=2
        )
    if not 1 <= args.clients <= 100_000:
        raise CommandError("--clients must be between 1 and 100000", exit_code=2)
    if not 3 <= args.duration <= 86_400:
        raise CommandError("--duration must be between 3 and 86400 seconds", exit_code=2)
    import os
    import sys

    from rich.console import Console

    from flagstaff_server.gameday import real_sdks

    for reason in real_sdks.missing():
        print(f"flagstaff gameday: real SDK missing, not in this run: {reason}", file=sys.stderr)
        if os.environ.get("CI", "").lower() == "true":
            raise CommandError(f"with CI=true every real SDK must run; missing {reason}")

    from flagstaff_server.gameday.node import NodeError
    from flagstaff_server.gameday.runner import Options, run_gameday
    from flagstaff_server.regions.postgres_cluster import ClusterError

    with tempfile.TemporaryDirectory(prefix="flagstaff-gameday-") as temporary:
        options = Options(
            clients=args.clients,
            duration=args.duration,
            report_dir=args.report,
            seed=args.seed,
            work_dir=args.work_dir or Path(temporary),
        )
        try:
            report = run_gameday(SCENARIOS[args.scenario], options, Console())
        except ClusterError as exc:
            raise CommandError(f"cannot start PostgreSQL: {exc}") from None
        except NodeError as exc:
            first = str(exc).splitlines()[0] if str(exc) else "a node failed"
            raise CommandError(f"the topology did not start: {first}") from None
    if report["interrupted"]:
        return 130
    return 0 if report["passed"] else 1
