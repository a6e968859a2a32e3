"""The long fuzzing pass, outside the test suite: every target (or those named) for its share of
`--minutes`, Hypothesis generating and shrinking, each input under a hang alarm and a memory cap.
A failing input is shrunk, recorded (JSON in `build/fuzz/report.json`, with its error) and the pass
goes on; the same failure is recorded once. Exit status 1 when anything was found.

    PYTHONPATH=tests .venv/bin/python -m fuzz --minutes 10 [--level pure|asgi|all] [TARGET ...]

(`make fuzz MINUTES=10` runs the same). See docs/fuzzing.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import time
import traceback
import tracemalloc
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import HypothesisWarning

from fuzz import asgi, decoders
from fuzz.decoders import Target

REPORT = Path("build/fuzz/report.json")
HANG_SECONDS = 10.0
"""One input running this long is a hang (a generous alarm, not a speed requirement)."""
MEMORY_CAP = 256 << 20
"""Peak bytes traced while handling one input above which it counts as unbounded memory."""
BATCH = 200


class Hang(Exception):
    pass


class Unbounded(Exception):
    pass


@dataclass
class Finding:
    signature: str
    error: str
    input: str


@dataclass
class Outcome:
    target: str
    seconds: float = 0.0
    inputs: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.inputs / self.seconds if self.seconds else 0.0


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang(f"one input ran longer than {HANG_SECONDS} s")


def signature_of(exc: BaseException) -> str:
    """The error's type and the innermost frame of Flagstaff's code it went through."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "flagstaff_" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "harness"
    return f"{type(exc).__name__} at {where}"


def shown(value: Any) -> str:
    """The input as JSON (bytes and tuples as Python literals), however deep it nests."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return json.dumps(value) if not isinstance(value, bytes | tuple) else repr(value)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
    finally:
        sys.setrecursionlimit(limit)


def fuzz(target: Target, seconds: float, *, trace_memory: bool) -> Outcome:
    outcome = Outcome(target.name)
    strategy = target.inputs()  # HTTP targets start the server here, before the clock
    ends = time.monotonic() + seconds
    seen: set[str] = set()
    failed: list[tuple[Any, BaseException]] = []

    def one(value: Any) -> None:
        outcome.inputs += 1
        if trace_memory:
            tracemalloc.reset_peak()
        signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
        try:
            target.check(value)
            peak = tracemalloc.get_traced_memory()[1] if trace_memory else 0
            if peak > MEMORY_CAP:
                raise Unbounded(f"one input traced {peak >> 20} MiB (cap {MEMORY_CAP >> 20} MiB)")
        except BaseException as exc:
            failed.append((value, exc))
            raise
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    run = settings(
        max_examples=BATCH,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
        print_blob=False,
    )(given(strategy)(one))
    started = time.monotonic()
    while time.monotonic() < ends:
        failed.clear()
        try:
            run()
        except Exception:  # recorded through `failed`: the last failure is the shrunk one
            if not failed:
                raise
            value, exc = failed[-1]
            signature = signature_of(exc)
            if signature not in seen:
                seen.add(signature)
                error = "".join(traceback.format_exception_only(exc)).strip()[:2_000]
                outcome.findings.append(Finding(signature, error, shown(value)[:20_000]))
                print(f"  {target.name}: FOUND {signature}: {error[:300]}", flush=True)
    outcome.seconds = time.monotonic() - started
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="in total, over all targets")
    parser.add_argument("--level", choices=("pure", "asgi", "all"), default="all")
    parser.add_argument("--no-trace-memory", action="store_true", help="skip tracemalloc")
    parser.add_argument("targets", nargs="*", help="target names (default: all of the level)")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)  # expected refusals log; failures are what is recorded
    chosen: list[Target] = []
    if args.level in ("pure", "all"):
        chosen += decoders.TARGETS
    if args.level in ("asgi", "all"):
        chosen += asgi.TARGETS
    if args.targets:
        chosen = [t for t in chosen if t.name in args.targets]
        if not chosen:
            parser.error(f"no target named {' or '.join(args.targets)}")
    signal.signal(signal.SIGALRM, _alarm)
    warnings.filterwarnings("ignore", category=HypothesisWarning)  # "overly large repr"
    share = args.minutes * 60 / len(chosen)
    outcomes = []
    try:
        for target in chosen:
            print(f"{target.name}: {share:.0f} s", flush=True)
            # tracemalloc makes pure decoding ~5x slower: the HTTP level traces every request
            trace_memory = target.name.startswith("http-") and not args.no_trace_memory
            if trace_memory:
                tracemalloc.start()
            outcome = fuzz(target, share, trace_memory=trace_memory)
            tracemalloc.stop()
            print(
                f"  {outcome.inputs} inputs in {outcome.seconds:.0f} s "
                f"({outcome.per_second:.0f}/s), {len(outcome.findings)} finding(s)",
                flush=True,
            )
            outcomes.append(outcome)
    finally:
        asgi.close()
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**asdict(o), "per_second": round(o.per_second, 1)} for o in outcomes]
    REPORT.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(f"report: {REPORT}")
    return 1 if any(o.findings for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
