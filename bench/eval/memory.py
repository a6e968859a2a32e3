"""Memory for 10,000 realistic flags: each SDK loads the same data file in a fresh process; RSS
growth after the client reported itself initialised, and the peak during loading (both over the
RSS after importing the SDK). `python -m bench.eval --memory`; writes build/bench/memory.json.
tracemalloc is not used: under it `ldclient` took over 7 minutes and 1.6 GB to load the file.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.eval.case import Json, build_clause, build_flag, build_rule, build_segment

FLAGS = 10_000
SEGMENTS = 100
OUTPUT = Path("build/bench/memory.json")
SDKS = ("flagstaff", "ldclient")


def build_data(flags: int = FLAGS, segments: int = SEGMENTS) -> Json:
    """A deterministic mix like a real project's: most flags boolean with a rule or two, some
    string/number/JSON multivariate flags, individual targets, percentage rollouts, a few
    prerequisites and segment rules; segments with included keys and a rule."""
    data: Json = {"flags": {}, "segments": {}}
    for s in range(segments):
        segment = build_segment(
            f"segment-{s}",
            version=3,
            included=[f"user-{s}-{i}" for i in range(50)],
            rules=[
                {
                    "id": f"segment-{s}-rule",
                    "clauses": [build_clause("email", "endsWith", [f"@company{s}.example"])],
                }
            ],
        )
        data["segments"][segment["key"]] = segment
    for f in range(flags):
        key = f"flag-{f:05d}-{'checkout' if f % 3 else 'search'}-experience"
        kind = f % 10
        if kind < 6:
            variations: list[Any] = [True, False]
        elif kind < 8:
            variations = ["control", "treatment-a", "treatment-b"]
        elif kind == 8:
            variations = [10, 50, 100]
        else:
            variations = [{"color": "blue", "size": 3}, {"color": "green", "size": 5}]
        rules = []
        for r in range(f % 4):
            clauses = [build_clause("country", "in", ["us", "ca", "gb", "de"][: r + 1])]
            if r % 2:
                clauses.append(build_clause("plan", "in", ["enterprise", "team"]))
            rules.append(build_rule(f"{key}-rule-{r}", clauses, r % len(variations)))
        if f % 7 == 0:
            rules.append(
                build_rule(
                    f"{key}-segment",
                    [build_clause("", "segmentMatch", [f"segment-{f % segments}"])],
                    0,
                )
            )
        fallthrough: Json = (
            {
                "rollout": {
                    "variations": [
                        {"variation": v, "weight": 100_000 // len(variations)}
                        for v in range(len(variations))
                    ]
                }
            }
            if f % 5 == 0
            else {"variation": len(variations) - 1}
        )
        flag = build_flag(
            key,
            version=1 + f % 17,
            on=f % 11 != 0,
            variations=variations,
            offVariation=len(variations) - 1,
            fallthrough=fallthrough,
            targets=(
                [{"values": [f"user-{f}-{i}" for i in range(5)], "variation": 0}]
                if f % 4 == 0
                else []
            ),
            rules=rules,
            prerequisites=[{"key": _prerequisite(f), "variation": 0}] if f % 13 == 1 else [],
            trackEvents=f % 20 == 0,
            clientSide=f % 2 == 0,
            clientSideAvailability={"usingMobileKey": f % 2 == 0, "usingEnvironmentId": f % 2 == 0},
        )
        data["flags"][key] = flag
    return data


def _prerequisite(f: int) -> str:
    # a boolean flag with a lower index, so prerequisite chains end
    target = (f // 10) * 10 - 10 if f >= 20 else 0
    return f"flag-{target:05d}-{'checkout' if target % 3 else 'search'}-experience"


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def load(sdk: str, path: Path) -> tuple[object, object]:
    """A client of `sdk` holding the file's flags (and a teardown), after one evaluation."""
    if sdk == "flagstaff":
        from flagstaff_sdk import Client, Config, Context

        client = Client(
            Config(
                "bench-sdk-key",
                base_uri="http://127.0.0.1:9",
                data_files=(path,),
                send_events=False,
            )
        )
        if not client.is_initialized():
            raise RuntimeError("flagstaff_sdk did not load the file")
        client.variation("flag-00000-search-experience", Context.create("u"), None)
        return client, client.close
    import logging

    from ldclient import Context as LDContext
    from ldclient.client import LDClient
    from ldclient.config import Config as LDConfig
    from ldclient.integrations import Files

    logging.getLogger("ldclient").setLevel(logging.WARNING)
    config = LDConfig(
        "bench-sdk-key",
        update_processor_class=Files.new_data_source(paths=[str(path)]),
        send_events=False,
    )
    ld = LDClient(config=config, start_wait=60)
    if not ld.is_initialized():
        raise RuntimeError("ldclient did not load the file")
    ld.variation("flag-00000-search-experience", LDContext.create("u"), None)
    return ld, ld.close


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def child(sdk: str, path: Path) -> dict[str, Any]:
    """Runs in the fresh process: import the SDK first so only the data's cost is counted."""
    modules = (
        ("flagstaff_sdk",) if sdk == "flagstaff" else ("ldclient.client", "ldclient.integrations")
    )
    for module in modules:
        importlib.import_module(module)
    gc.collect()
    before = rss_bytes()
    started = time.process_time()
    client, close = load(sdk, path)
    seconds = time.process_time() - started
    gc.collect()
    result: dict[str, Any] = {
        "load_cpu_seconds": round(seconds, 2),
        "rss_growth_bytes": rss_bytes() - before,
        # getrusage and statm count slightly differently; the peak is never below the end
        "peak_rss_growth_bytes": max(peak_rss_bytes(), rss_bytes()) - before,
    }
    assert client is not None
    close()  # type: ignore[operator]
    return result


def main() -> int:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flagstaff-bench-memory-") as directory:
        path = Path(directory) / "flags.json"
        path.write_text(json.dumps(build_data()))
        size = path.stat().st_size
        results: dict[str, dict[str, Any]] = {sdk: {} for sdk in SDKS}
        for sdk in SDKS:
            done = subprocess.run(
                [sys.executable, "-m", "bench.eval.memory", sdk, str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            results[sdk].update(json.loads(done.stdout.strip().splitlines()[-1]))
    mib = 1024 * 1024
    print(f"memory for {FLAGS:,} flags and {SEGMENTS} segments ({size / mib:.1f} MiB of JSON),")
    print("each SDK in a fresh process, measured after initialisation and one evaluation")
    print(f"{'':<38}{'flagstaff':>10}{'ldclient':>10}{'ratio':>8}")
    for label, field in (
        ("RSS growth (MiB)", "rss_growth_bytes"),
        ("peak RSS growth while loading (MiB)", "peak_rss_growth_bytes"),
    ):
        ours, theirs = results["flagstaff"][field], results["ldclient"][field]
        print(f"{label:<38}{ours / mib:>10.1f}{theirs / mib:>10.1f}{theirs / ours:>7.1f}x")
    seconds = [results[sdk]["load_cpu_seconds"] for sdk in SDKS]
    # CPU time, not wall time: on a loaded shared machine wall time mostly measures the queue
    print(f"{'load CPU time, all threads (s)':<38}{seconds[0]:>10.2f}{seconds[1]:>10.2f}")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (shared machine)")
    document = {"flags": FLAGS, "segments": SEGMENTS, "file_bytes": size, "results": results}
    OUTPUT.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    print(json.dumps(child(sys.argv[1], Path(sys.argv[2]))))
