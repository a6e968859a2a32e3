"""Shapes measurements into the printed table and the JSON document; measures and evaluates nothing.

Ratios are peer time / Flagstaff time on medians, so 10.0 means Flagstaff is ten times faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.eval.case import Case
from bench.eval.timing import Timing

GOAL_RATIO = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerInfo:
    label: str
    side: str
    group: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    case: Case
    timings: dict[str, Timing]


def ratio_pairs(runners: Sequence[RunnerInfo]) -> list[tuple[str, str]]:
    """(flagstaff label, peer label) for every pair to compare: same group, opposite sides."""
    ours = [r for r in runners if r.side == "flagstaff"]
    peers = [r for r in runners if r.side == "peer"]
    return [(mine.label, peer.label) for mine in ours for peer in peers if mine.group == peer.group]


def ratio(result: CaseResult, mine: str, peer: str) -> float:
    return result.timings[peer].median_ns / result.timings[mine].median_ns


def format_table(runners: Sequence[RunnerInfo], results: Sequence[CaseResult]) -> str:
    pairs = ratio_pairs(runners)
    name_width = max(len("case"), *(len(r.case.name) for r in results))
    lines = ["µs per evaluation: median of repeats (min in brackets); ratio = peer / flagstaff"]
    for index, info in enumerate(runners, start=1):
        lines.append(f"  [{index}] {info.label} ({info.side}; {info.group})")
    labels = [info.label for info in runners]
    pair_names = [f"[{labels.index(peer) + 1}]/[{labels.index(mine) + 1}]" for mine, peer in pairs]
    header = f"{'case':<{name_width}}  " + "  ".join(
        f"{f'[{i}] µs':>16}" for i in range(1, len(runners) + 1)
    )
    header += "  " + "  ".join(f"{name:>9}" for name in pair_names)
    lines += [header, "-" * len(header)]
    for result in results:
        cells = [
            f"{t.median_ns / 1000:>7.2f} ({t.min_ns / 1000:>6.2f})"
            for t in (result.timings[label] for label in labels)
        ]
        ratios = [f"{ratio(result, mine, peer):>8.1f}x" for mine, peer in pairs]
        lines.append(f"{result.case.name:<{name_width}}  " + "  ".join(cells + ratios))
    for mine, peer in pairs:
        worst = min(ratio(result, mine, peer) for result in results)
        verdict = "met" if worst >= GOAL_RATIO else "NOT met"
        lines.append(
            f"goal >= {GOAL_RATIO:.0f}x for {mine} vs {peer}: {verdict} (worst case {worst:.1f}x)"
        )
    return "\n".join(lines)


def build_document(
    runners: Sequence[RunnerInfo],
    results: Sequence[CaseResult],
    *,
    repeats: int,
    environment: dict[str, str],
) -> dict[str, Any]:
    pairs = ratio_pairs(runners)
    return {
        "unit": "microseconds per evaluation",
        "repeats": repeats,
        "environment": environment,
        "runners": [{"label": r.label, "side": r.side, "group": r.group} for r in runners],
        "cases": [
            {
                "name": result.case.name,
                "description": result.case.description,
                "flag": result.case.flag_key,
                "contexts": len(result.case.contexts),
                "timings": {
                    label: {
                        "evaluations_per_repeat": timing.evaluations,
                        "median_us": round(timing.median_ns / 1000, 4),
                        "min_us": round(timing.min_ns / 1000, 4),
                        "samples_us": [round(sample / 1000, 4) for sample in timing.samples_ns],
                    }
                    for label, timing in result.timings.items()
                },
                "ratios": [
                    {
                        "flagstaff": mine,
                        "peer": peer,
                        "median_ratio": round(ratio(result, mine, peer), 3),
                        "min_ratio": round(
                            result.timings[peer].min_ns / result.timings[mine].min_ns, 3
                        ),
                        "meets_goal": ratio(result, mine, peer) >= GOAL_RATIO,
                    }
                    for mine, peer in pairs
                ],
            }
            for result in results
        ],
    }
