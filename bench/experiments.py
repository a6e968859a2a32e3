"""An experiment's aggregation at scale, beside its peer in the same run: per-unit values from
first exposures and the custom events after them, then n, Σx, Σx² per variation.

  flagstaff  `ingest.experiment_aggregation.aggregate_metric` (the statement the results endpoint
             runs) on a SQLite analytics store holding the exposures and events (file on disk,
             loaded before the timing starts);
  pandas     the same aggregation as a plain pandas query over the same rows already in memory
             (no parsing, no storage: the floor an in-memory columnar engine sets).

Data (seeded): `--units` units split 50/50 between two variations, each exposed once (a tenth
of them twice, the second exposure later and to the other variation, which must not count);
`--events` purchase events on random units, a tenth of them before the unit's exposure (not
counted), values exponential with a +5 % lift for variation 0. Both phases must give the same
totals (checked). Each phase runs in a fresh process (spawned); memory is the growth of its peak RSS
during the aggregation over its resident size before (for pandas the frames are already in
memory, so that is the query's working memory; SQLite's page cache counts for flagstaff); time
is wall-clock of the aggregation only; the ratio is flagstaff ÷ pandas from the same run.

Run `python -m bench.experiments [--units 1000000] [--events 10000000] [--rounds 1]`. Bounded by
the sizes. Writes `build/bench/experiments.json`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.experiment_aggregation import MetricQuery, aggregate_metric
from sqlalchemy import create_engine

OUTPUT = Path("build/bench/experiments.json")
T0 = 1_780_000_000_000
SEED = 17
CHUNK = 200_000
"""Rows per insert batch while loading (bounds the loader's memory)."""
QUERY = MetricQuery(
    project="p",
    environment="e",
    flag_key="f",
    first_version=1,
    last_version=1,
    context_kind="user",
    event_key="purchase",
    numeric=True,
    aggregation="sum",
)


def generate(units: int, events: int) -> dict[str, np.ndarray[Any, Any]]:
    """Exposure rows (unit, first time, variation) and event rows (unit, time, value)."""
    rng = np.random.default_rng(SEED)
    unit = np.arange(units)
    variation = (rng.random(units) < 0.5).astype(np.int64)
    first = T0 + rng.integers(0, 86_400_000, units)
    again = unit[rng.random(units) < 0.1]
    exposure_unit = np.concatenate([unit, again])
    exposure_first = np.concatenate([first, first[again] + 1_000])
    exposure_variation = np.concatenate([variation, 1 - variation[again]])
    event_unit = rng.integers(0, units, events)
    offset = rng.integers(0, 3_600_000, events)
    early = rng.random(events) < 0.1
    event_ms = first[event_unit] + np.where(early, -1 - offset, offset)
    scale = np.where(variation[event_unit] == 0, 10.5, 10.0)
    value = np.round(rng.exponential(scale), 2)
    return {
        "exposure_unit": exposure_unit,
        "exposure_first": exposure_first,
        "exposure_variation": exposure_variation,
        "event_unit": event_unit,
        "event_ms": event_ms,
        "event_value": value,
    }


def load(path: Path, data: dict[str, np.ndarray[Any, Any]]) -> float:
    """The rows into a SQLite analytics store (its own schema, from its migrations)."""
    url = f"sqlite:///{path}"
    store = AnalyticsStore(url)
    store.position("bench")  # migrates on first use
    store.close()
    started = time.perf_counter()
    engine = create_engine(url)
    exposures = (
        "INSERT INTO experiment_exposures (project, environment, flag_key, flag_version, "
        "context_kind, context_key, first_ms, variation) VALUES ('p', 'e', 'f', 1, 'user', "
        "?, ?, ?) ON CONFLICT DO UPDATE SET first_ms = MIN(first_ms, excluded.first_ms), "
        "variation = CASE WHEN excluded.first_ms < first_ms THEN excluded.variation "
        "ELSE variation END"
    )
    events = (
        "INSERT INTO ingest_custom_events (project, environment, created_ms, key, "
        "context_key, metric_value) VALUES ('p', 'e', ?, 'purchase', ?, ?)"
    )
    with engine.begin() as connection:
        for start in range(0, len(data["exposure_unit"]), CHUNK):
            part = slice(start, start + CHUNK)
            keys = (f"u{u}" for u in data["exposure_unit"][part].tolist())
            rows = zip(
                keys,
                data["exposure_first"][part].tolist(),
                data["exposure_variation"][part].tolist(),
                strict=True,
            )
            connection.exec_driver_sql(exposures, list(rows))
        for start in range(0, len(data["event_unit"]), CHUNK):
            part = slice(start, start + CHUNK)
            keys = (f"u{u}" for u in data["event_unit"][part].tolist())
            rows = zip(
                data["event_ms"][part].tolist(),
                keys,
                data["event_value"][part].tolist(),
                strict=True,
            )
            connection.exec_driver_sql(events, list(rows))
    engine.dispose()
    return time.perf_counter() - started


def reset_peak() -> None:
    """Start this process's peak RSS afresh (Linux: `clear_refs` 5 resets VmHWM)."""
    Path("/proc/self/clear_refs").write_text("5")


def peak_mb() -> float:
    """This process's peak resident memory since the last `reset_peak`, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def run_flagstaff(path: str, units: int, events: int) -> dict[str, Any]:
    del units, events
    base = resident_mb()
    reset_peak()
    engine = create_engine(f"sqlite:///{path}")
    started = time.perf_counter()
    with engine.connect() as connection:
        rows = aggregate_metric(connection, QUERY)
    seconds = time.perf_counter() - started
    engine.dispose()
    peak = peak_mb()
    totals = {r.variation: (r.units, r.total, r.total_squares) for r in rows}
    return {
        "seconds": seconds,
        "peak_rss_mb": peak,
        "growth_mb": peak - base,
        "totals": totals,
    }


def run_pandas(path: str, units: int, events: int) -> dict[str, Any]:
    del path
    data = generate(units, events)
    exposures = pd.DataFrame(
        {
            "unit": data["exposure_unit"],
            "first": data["exposure_first"],
            "variation": data["exposure_variation"],
        }
    )
    purchases = pd.DataFrame(
        {"unit": data["event_unit"], "at": data["event_ms"], "value": data["event_value"]}
    )
    del data
    base = resident_mb()
    reset_peak()
    started = time.perf_counter()
    first = exposures.sort_values(["first", "variation"]).drop_duplicates("unit")
    joined = purchases.merge(first[["unit", "first"]], on="unit")
    after = joined[joined["at"] >= joined["first"]]
    per_unit = after.groupby("unit")["value"].sum()
    values = first.set_index("unit")[["variation"]].join(per_unit).fillna({"value": 0.0})
    values["square"] = values["value"] ** 2
    grouped = values.groupby("variation").agg(
        n=("value", "size"), total=("value", "sum"), squares=("square", "sum")
    )
    seconds = time.perf_counter() - started
    peak = peak_mb()
    totals = {
        int(v): (int(row.n), float(row.total), float(row.squares)) for v, row in grouped.iterrows()
    }
    return {
        "seconds": seconds,
        "peak_rss_mb": peak,
        "growth_mb": peak - base,
        "totals": totals,
    }


PHASES = {"flagstaff": run_flagstaff, "pandas": run_pandas}


def phase(name: str, path: Path, units: int, events: int) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        result: dict[str, Any] = pool.apply(PHASES[name], (str(path), units, events))
    return result


def same_totals(left: dict[int, tuple[int, float, float]], right: dict[int, Any]) -> bool:
    return left.keys() == right.keys() and all(
        left[k][0] == right[k][0]
        and np.isclose(left[k][1], right[k][1], rtol=1e-9)
        and np.isclose(left[k][2], right[k][2], rtol=1e-9)
        for k in left
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "analytics.db"
        load_seconds = load(path, generate(args.units, args.events))
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in PHASES}
        for _ in range(args.rounds):
            for name in PHASES:
                rounds[name].append(phase(name, path, args.units, args.events))
        database_mb = path.stat().st_size / 2**20
    best = {name: min(results, key=lambda r: r["seconds"]) for name, results in rounds.items()}
    agree = same_totals(best["flagstaff"]["totals"], best["pandas"]["totals"])
    report = {
        "units": args.units,
        "events": args.events,
        "load_seconds": load_seconds,
        "database_mb": database_mb,
        "totals_agree": agree,
        "phases": {
            name: {k: v for k, v in result.items() if k != "totals"}
            for name, result in best.items()
        },
        "ratio_flagstaff_to_pandas": best["flagstaff"]["seconds"] / best["pandas"]["seconds"],
        "totals": {str(k): v for k, v in best["flagstaff"]["totals"].items()},
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    if not agree:
        raise SystemExit("the two aggregations disagree")


if __name__ == "__main__":
    main()
