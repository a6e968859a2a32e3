"""Entry point of `python -m bench.eval`: checks that every runner gives the same answers, then
times them side by side and writes the table to stdout and JSON to build/bench/eval.json.
`--memory` instead loads 10,000 flags into each SDK in fresh processes (`bench.eval.memory`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench.eval.case import Case, build_cases
from bench.eval.launchdarkly import (
    InternalRunner,
    LaunchDarklyClient,
    PublicRunner,
    VariationRunner,
)
from bench.eval.report import CaseResult, RunnerInfo, build_document, format_table
from bench.eval.runner import Answer, CoreRunner, Prepared, Runner
from bench.eval.sdk import SdkRunner
from bench.eval.sink import EventSinkProcess
from bench.eval.timing import Timing, rounds_for, time_once

EVENTS_NOTE = (
    "events on: each SDK's own event processor (default flush interval and capacities) posting"
    " to a loopback sink in another process that answers 202 (flushes on their own timers);"
    " every timed repeat ends by waiting until the processor's thread has summarised every"
    " evaluation recorded, so that work is counted"
)

DEFAULT_OUTPUT = Path("build/bench/eval.json")
REPEAT_TARGET_NS = 20_000_000
SETTLE_REPEAT_TARGET_NS = 100_000_000
"""Repeats that end with a `settle` (a thread hand-off of a millisecond or more) run longer, so
that fixed cost is a few percent of the repeat rather than a tenth of it."""
MAX_EVALUATIONS = 200_000


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.eval", description=__doc__)
    parser.add_argument(
        "--evaluations",
        type=int,
        default=4000,
        help="minimum evaluations per repeat (default 4000; fast runners get more, up to ~20 ms)",
    )
    parser.add_argument("--repeats", type=int, default=7, help="repeats per runner (default 7)")
    parser.add_argument(
        "--quick", action="store_true", help="3 repeats of at least 200 evaluations: a smoke run"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON result path")
    parser.add_argument(
        "--memory",
        action="store_true",
        help="measure memory for 10,000 flags in each SDK instead of timing evaluations",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.evaluations, args.repeats = 200, 3
    if args.evaluations < 1 or args.repeats < 1:
        parser.error("--evaluations and --repeats must be positive")
    return args


def check_agreement(
    case: Case, runners: Sequence[Runner], prepared: Sequence[Prepared]
) -> list[str]:
    """Differences between each runner's answers and the first runner's, per context; and for a
    runner timing a bare-value call, differences between that value and its detail call's."""
    problems = []
    reference = [answers_of(prepared[0], c)[0] for c in prepared[0].contexts]
    for runner, ready in zip(runners, prepared, strict=True):
        for context, expected, built in zip(case.contexts, reference, ready.contexts, strict=True):
            actual, value = answers_of(ready, built)
            if expected != actual:
                problems.append(
                    f"{case.name}: {runners[0].label} gave {expected}, {runner.label} gave"
                    f" {actual} for context {context}"
                )
            if value is not None:
                problems.append(f"{case.name}: {runner.label}: {value} for context {context}")
    return problems


def answers_of(ready: Prepared, context: object) -> tuple[Answer, str | None]:
    """The runner's Answer for `context`, and what is wrong with its timed call's value if that
    call returns a bare value (it must equal the value of the detail call)."""
    if ready.detail is None:
        return ready.answer(ready.call(context)), None
    detail: Any = ready.detail(context)
    value = ready.call(context)
    if value != detail.value:
        return ready.answer(detail), f"variation gave {value!r}, the detail {detail.value!r}"
    return ready.answer(detail), None


def measure(
    case: Case, prepared: Sequence[Prepared], evaluations: int, repeats: int
) -> list[Timing]:
    """Time every runner `repeats` times; a fast runner gets more evaluations per repeat (up to
    `REPEAT_TARGET_NS` of work, at most `MAX_EVALUATIONS`) so its repeats are not timer noise."""
    warmup = rounds_for(case.contexts, min(evaluations, 500))
    rounds = []
    for ready in prepared:
        estimate = time_once(ready.call, ready.contexts, warmup, ready.settle)
        target = REPEAT_TARGET_NS if ready.settle is None else SETTLE_REPEAT_TARGET_NS
        wanted = min(MAX_EVALUATIONS, max(evaluations, int(target / estimate)))
        rounds.append(rounds_for(case.contexts, wanted))
    samples: list[list[float]] = [[] for _ in prepared]
    order = list(range(len(prepared)))
    for _ in range(repeats):
        # Rotating who goes first keeps slow drift (frequency scaling, neighbours) from
        # always landing on the same runner.
        order = order[1:] + order[:1]
        for index in order:
            ready = prepared[index]
            samples[index].append(
                time_once(ready.call, ready.contexts, rounds[index], ready.settle)
            )
    return [
        Timing(samples_ns=tuple(s), evaluations=r * len(case.contexts))
        for s, r in zip(samples, rounds, strict=True)
    ]


def load_average() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.memory:
        from bench.eval.memory import main as measure_memory

        return measure_memory()
    cases, data = build_cases()
    sink = EventSinkProcess()
    launchdarkly = LaunchDarklyClient(data)
    launchdarkly_events = LaunchDarklyClient(data, events_uri=sink.uri)
    runners: list[Runner] = [
        CoreRunner(data),
        SdkRunner(data, events_uri=None),
        SdkRunner(data, events_uri=sink.uri),
        PublicRunner(launchdarkly),
        InternalRunner(launchdarkly),
        VariationRunner(launchdarkly, events=False),
        VariationRunner(launchdarkly_events, events=True),
    ]
    remarks: list[str] = []
    try:
        results = []
        for case in cases:
            prepared = [runner.prepare(case) for runner in runners]
            problems = check_agreement(case, runners, prepared)
            if problems:
                print("runners disagree; not timing:", *problems, sep="\n", file=sys.stderr)
                return 1
            timings = measure(case, prepared, args.evaluations, args.repeats)
            results.append(
                CaseResult(
                    case=case,
                    timings={r.label: t for r, t in zip(runners, timings, strict=True)},
                )
            )
        for runner in runners:
            remarks += getattr(runner, "remarks", list)()
    finally:
        for runner in runners:
            runner.close()
        launchdarkly.close()
        launchdarkly_events.close()
        sink.close()
    infos = [RunnerInfo(label=r.label, side=r.side, group=r.group) for r in runners]
    print(format_table(infos, results))
    print(EVENTS_NOTE)
    print(f"load average at the end: {load_average()} (shared machine)")
    for remark in remarks:
        print("WARNING:", remark)
    environment = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "launchdarkly-server-sdk": version("launchdarkly-server-sdk"),
        "load_average": load_average(),
        "events_on": EVENTS_NOTE,
        "remarks": "; ".join(remarks),
    }
    document = build_document(infos, results, repeats=args.repeats, environment=environment)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
