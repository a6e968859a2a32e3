"""Event processing cost, in-process, on the payloads `bench.ingest` sends (50 LaunchDarkly-style
events each), beside its peer from the same run: `orjson.loads` of the same payloads, the least
any processor must pay to read them. Phases, run in alternating rounds (best round of each):
  decode_floor   orjson.loads of every payload, nothing kept;
  tally          `tally` of the journal records, batch by batch (no store);
  sqlite         `AnalyticsStore.commit` of each batch on a SQLite file (tally + SQL);
  postgres       the same on a throwaway PostgreSQL database (skipped if unreachable).
Each reports payloads/s (wall) and CPU microseconds per payload of this process (a PostgreSQL
server's own CPU is not in it), and each is a multiple of the floor's CPU per payload.

Run `python -m bench.ingest_processing [--payloads 3000] [--batch 500] [--rounds 3]`. Bounded by
the payload count. Writes `build/bench/ingest_processing.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson
import psycopg
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.tally import tally

from bench.ingest import EVENTS_PER_PAYLOAD, events_body
from bench.servers import postgres_database

OUTPUT = Path("build/bench/ingest_processing.json")
BATCH = 500
"""Records per batch: what the processor reads at once (`Processor.batch_records`) while it
works off a backlog, as under load."""


def journal_records(count: int, tag: str) -> list[Record]:
    """`count` records of the body `bench.ingest` sends, with payload ids unique to `tag`."""
    now_ms = int(time.time() * 1000)
    body = events_body(now_ms)
    return [
        Record(
            seq=seq,
            received_ms=now_ms,
            kind=Kind.ANALYTICS,
            project="bench",
            environment="production",
            payload_id=f"{tag}-{seq}",
            payload=body,
        )
        for seq in range(1, count + 1)
    ]


def batches(records: Sequence[Record], size: int) -> Iterator[Sequence[Record]]:
    for start in range(0, len(records), size):
        yield records[start : start + size]


def decode_floor(records: Sequence[Record], size: int) -> None:
    loads = orjson.loads
    for batch in batches(records, size):
        for record in batch:
            loads(record.payload)


def tally_only(records: Sequence[Record], size: int) -> None:
    for batch in batches(records, size):
        tally(batch)


def committing(store: AnalyticsStore) -> Callable[[Sequence[Record], int], None]:
    def run(records: Sequence[Record], size: int) -> None:
        now_ms = int(time.time() * 1000)
        for batch in batches(records, size):
            store.commit("bench-node", batch, now_ms=now_ms)

    return run


def timed(
    work: Callable[[Sequence[Record], int], None], records: Sequence[Record], size: int
) -> dict[str, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    work(records, size)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "payloads_per_s": len(records) / wall,
        "cpu_us_per_payload": cpu / len(records) * 1e6,
        "wall_us_per_payload": wall / len(records) * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--payloads", type=int, default=3000, help="per phase and round")
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()

    results: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "payloads": args.payloads,
        "events_per_payload": EVENTS_PER_PAYLOAD,
        "batch": args.batch,
    }
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="processing-")))
        phases: dict[str, Callable[[Sequence[Record], int], None]] = {
            "decode_floor": decode_floor,
            "tally": tally_only,
        }
        stores: dict[str, AnalyticsStore] = {
            "sqlite": AnalyticsStore(f"sqlite:///{scratch / 'analytics.db'}")
        }
        if not args.no_postgres:
            try:
                stores["postgres"] = AnalyticsStore(stack.enter_context(postgres_database()))
            except psycopg.OperationalError as exc:
                print(f"postgres phase skipped: {exc}")
        for name, store in stores.items():
            stack.callback(store.close)
            store.position("bench-node")  # migrates: not part of any round
            phases[name] = committing(store)
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in phases}
        for number in range(args.rounds):
            for name, work in phases.items():
                # fresh payload ids each time: a store would skip ids it has processed
                records = journal_records(args.payloads, f"{name}-{number}")
                rounds[name].append(timed(work, records, args.batch))
    floor_cpu = min(r["cpu_us_per_payload"] for r in rounds["decode_floor"])
    for name, measured in rounds.items():
        best: dict[str, Any] = dict(min(measured, key=lambda r: r["cpu_us_per_payload"]))
        best["rounds_cpu_us_per_payload"] = [round(r["cpu_us_per_payload"], 1) for r in measured]
        best["cpu_over_decode_floor"] = best["cpu_us_per_payload"] / floor_cpu
        results[name] = best
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
