"""`streaming-blocked`: both regions' delivery proxies reset every long-lived stream (FDv1 and
FDv2 server streams, client-side `/eval` streams) while passing polls, as a proxy that does not
allow long-lived connections would. Streaming clients fall back to polling and stay within a
few seconds of the flag while edits go on; once streams pass again they stream again and every
client is current.

Streams are cut by a TCP reset, so each stream attempt fails at once (a proxy holding them open
silently would leave each attempt to the clients' 5 s read timeout, and the first fallback poll,
after two failed attempts, ~10 s in).

The bound is relative to the clients that only poll, in the same run: a fallback poll comes
between stream attempts, so a client with a fallback may trail a poller by one stream backoff
(at most 2 s). An absolute bound measures the machine: at a load average of ~25 even the
pollers, which the block never touches, were 10 s stale (edits, delivery and the fleet's own
event loop all starved), and so would every client with a fallback be, whatever it did; an
earlier attempt's 13.2 s against a 5 s bound came from such a run. Each streaming client must
also have been sent a newer value while its stream was cut, which only its polls could bring.

The official LaunchDarkly Python SDK streams only (its FDv1 data source has no polling
fallback): it keeps the value it held when the block began and catches up after it, so it is
held to the recovery bound, not to the fallback's; the report says how stale it grew.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from flagstaff_server.gameday.fault_proxy import STREAM_PATHS, Fault, FaultProxy
from flagstaff_server.gameday.fleet import STREAMING, ClientView
from flagstaff_server.gameday.scenario import (
    Check,
    Drill,
    Phase,
    Scenario,
    current_within,
    no_event_lost,
    served_throughout,
)
from flagstaff_server.gameday.timeline import max_staleness

BLOCKED_PATHS = (*STREAM_PATHS, "/eval/")
FALLBACK_MARGIN_S = 2.0
"""While streams are blocked, a client with a polling fallback is at most this much staler than
the clients that only poll: its fallback polls come between stream attempts, at most one stream
backoff (its cap, 2 s) apart."""
POLLING = frozenset({"fdv1-poll", "fdv2-poll"})
RECOVERY_BOUND_S = 10.0
STREAMING_ONLY = frozenset({"sdk-launchdarkly", "sdk-node"})
"""Clients with no polling fallback."""


def _proxies(drill: Drill) -> list[FaultProxy]:
    proxies = [drill.topology.a.delivery_proxy, drill.topology.b.delivery_proxy]
    return [p for p in proxies if p is not None]


def _streamers(drill: Drill) -> list[ClientView]:
    return [v for v in drill.views if v.kind in STREAMING]


async def block(drill: Drill) -> None:
    drill.begin_fault()
    drill.notes["fallback_polls_before"] = {v.name: v.fallback_polls for v in drill.views}
    for proxy in _proxies(drill):
        proxy.set(Fault("reset"), paths=BLOCKED_PATHS)
    drill.notes["blocked"] = time.monotonic()


async def unblock(drill: Drill) -> None:
    drill.notes["unblocked"] = time.monotonic()
    drill.notes["fallback_polls_blocked"] = {
        v.name: v.fallback_polls - drill.notes["fallback_polls_before"].get(v.name, 0)
        for v in drill.views
    }
    for proxy in _proxies(drill):
        proxy.heal()
    drill.end_fault()


def streaming_again(drill: Drill) -> bool:
    """Every client current and every streaming protocol client on a stream again."""
    return drill.recovered() and all(v.connected for v in _streamers(drill))


def worst_by_kind(drill: Drill) -> dict[str, float]:
    """The most stale each kind of client grew while streams were blocked (seconds)."""
    start = float(drill.notes.get("blocked", 0.0))
    end = float(drill.notes.get("unblocked", start))
    worst: dict[str, float] = {}
    for view in drill.views:
        stale = max_staleness(drill.timeline, view.holding, start, end) or 0.0
        worst[view.kind] = round(max(worst.get(view.kind, 0.0), stale), 2)
    return worst


def _sent_while_blocked(drill: Drill, view: ClientView) -> bool:
    """The client came to hold a value newer than the one it held when streams were cut."""
    start = float(drill.notes.get("blocked", 0.0))
    end = float(drill.notes.get("unblocked", start))
    held = view.holding.held_at(start)
    return any(start < t <= end and value != held for t, value in view.holding.transitions)


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    polls: dict[str, int] = drill.notes.get("fallback_polls_blocked", {})
    streamers = _streamers(drill)
    fell_back = sum(polls.get(v.name, 0) > 0 for v in streamers)
    by_kind = worst_by_kind(drill)
    worst = max((s for k, s in by_kind.items() if k not in STREAMING_ONLY), default=0.0)
    pollers = max((s for k, s in by_kind.items() if k in POLLING), default=0.0)
    fed = sum(_sent_while_blocked(drill, v) for v in streamers)
    connected = sum(v.connected for v in streamers)
    return [
        served_throughout(report),
        Check(
            "streaming clients polled while their streams were cut",
            bool(streamers) and fell_back == len(streamers),
            f"{fell_back} of {len(streamers)} streaming protocol clients made fallback polls"
            f" ({sum(polls.values())} in all)",
        ),
        Check(
            "streaming clients were sent changes while their streams were cut",
            bool(streamers) and fed == len(streamers),
            f"{fed} of {len(streamers)} streaming protocol clients came to hold a newer value"
            " during the block",
        ),
        Check(
            f"clients with a polling fallback within {FALLBACK_MARGIN_S:g} s of the pollers",
            "unblocked" in drill.notes and worst <= pollers + FALLBACK_MARGIN_S,
            f"worst staleness while blocked {worst:.2f} s, pollers' {pollers:.2f} s; by kind:"
            f" {by_kind} (streaming-only, held to the recovery bound instead:"
            f" {', '.join(sorted(STREAMING_ONLY))})",
        ),
        Check(
            "streaming again after the block",
            bool(streamers) and connected == len(streamers),
            f"{connected} of {len(streamers)} streaming protocol clients on a stream at the end",
        ),
        current_within(RECOVERY_BOUND_S, report["recovery_s"], "after streams passed again"),
        no_event_lost(report),
    ]


SCENARIO = Scenario(
    name="streaming-blocked",
    summary="long-lived streams cut by the proxies: SDKs fall back to polling and back",
    phases=(
        Phase("steady", 0.25),
        Phase("streams blocked", 0.5, block, min_seconds=6.0),
        Phase(
            "streams pass",
            0.25,
            unblock,
            min_seconds=RECOVERY_BOUND_S + 2.0,
            until=streaming_again,
        ),
    ),
    checks=checks,
)
