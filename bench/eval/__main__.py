"""Entry point of `python -m bench.eval`: checks that every runner gives the same answers, then
times them side by side and writes the table to stdout and JSON to build/bench/eval.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from bench.eval.case import Case, build_cases
from bench.eval.launchdarkly import InternalRunner, LaunchDarklyClient, PublicRunner
from bench.eval.report import CaseResult, RunnerInfo, build_document, format_table
from bench.eval.runner import CoreRunner, Prepared, Runner
from bench.eval.timing import Timing, rounds_for, time_once

DEFAULT_OUTPUT = Path("build/bench/eval.json")
REPEAT_TARGET_NS = 20_000_000
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
    args = parser.parse_args(argv)
    if args.quick:
        args.evaluations, args.repeats = 200, 3
    if args.evaluations < 1 or args.repeats < 1:
        parser.error("--evaluations and --repeats must be positive")
    return args


def check_agreement(
    case: Case, runners: Sequence[Runner], prepared: Sequence[Prepared]
) -> list[str]:
    """Differences between each runner's answers and the first runner's, per context."""
    problems = []
    reference = [prepared[0].answer(prepared[0].call(c)) for c in prepared[0].contexts]
    for runner, ready in zip(runners[1:], prepared[1:], strict=True):
        answers = [ready.answer(ready.call(c)) for c in ready.contexts]
        for context, expected, actual in zip(case.contexts, reference, answers, strict=True):
            if expected != actual:
                problems.append(
                    f"{case.name}: {runners[0].label} gave {expected}, {runner.label} gave"
                    f" {actual} for context {context}"
                )
    return problems


def measure(
    case: Case, prepared: Sequence[Prepared], evaluations: int, repeats: int
) -> list[Timing]:
    """Time every runner `repeats` times; a fast runner gets more evaluations per repeat (up to
    `REPEAT_TARGET_NS` of work, at most `MAX_EVALUATIONS`) so its repeats are not timer noise."""
    warmup = rounds_for(case.contexts, min(evaluations, 500))
    rounds = []
    for ready in prepared:
        estimate = time_once(ready.call, ready.contexts, warmup)
        wanted = min(MAX_EVALUATIONS, max(evaluations, int(REPEAT_TARGET_NS / estimate)))
        rounds.append(rounds_for(case.contexts, wanted))
    samples: list[list[float]] = [[] for _ in prepared]
    order = list(range(len(prepared)))
    for _ in range(repeats):
        # Rotating who goes first keeps slow drift (frequency scaling, neighbours) from
        # always landing on the same runner.
        order = order[1:] + order[:1]
        for index in order:
            ready = prepared[index]
            samples[index].append(time_once(ready.call, ready.contexts, rounds[index]))
    return [
        Timing(samples_ns=tuple(s), evaluations=r * len(case.contexts))
        for s, r in zip(samples, rounds, strict=True)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    cases, data = build_cases()
    launchdarkly = LaunchDarklyClient(data)
    runners: list[Runner] = [
        CoreRunner(data),
        PublicRunner(launchdarkly),
        InternalRunner(launchdarkly),
    ]
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
    finally:
        for runner in runners:
            runner.close()
        launchdarkly.close()
    infos = [RunnerInfo(label=r.label, side=r.side) for r in runners]
    print(format_table(infos, results))
    environment = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "launchdarkly-server-sdk": version("launchdarkly-server-sdk"),
    }
    document = build_document(infos, results, repeats=args.repeats, environment=environment)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
