"""Runs one game day: starts the topology, the fleets (protocol clients in both regions, the real
SDKs, the event senders) and the change driver, plays the scenario's phases while sampling,
then drains the events, counts them in the analytics store, checks and writes the report.
SIGINT (Ctrl-C) ends the phases early; the report of what ran is still written.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from flagstaff_server.gameday.display import Progress
from flagstaff_server.gameday.event_fleet import EventLedger, EventSender, count_stored
from flagstaff_server.gameday.fleet import (
    KINDS,
    ClientView,
    ProtocolClient,
    Tuning,
    client_http,
    shared_tls,
)
from flagstaff_server.gameday.limits import event_loop_factory, raise_open_files
from flagstaff_server.gameday.real_sdks import RealSdk, flagstaff_sdk, node_sdk, official_sdk
from flagstaff_server.gameday.recorder import Recorder
from flagstaff_server.gameday.report import NodeFigures, PhaseSpan, figures
from flagstaff_server.gameday.report_page import print_summary, write_report
from flagstaff_server.gameday.scenario import Drill, Scenario
from flagstaff_server.gameday.timeline import Timeline
from flagstaff_server.gameday.topology import Topology

TICK_SECONDS = 0.5
WARM_UP_SECONDS = 60.0
DRAIN_SECONDS = 30.0
COUNT_SECONDS = 30.0
EDIT_SECONDS = 1.0
RAMP_CLIENTS_PER_SECOND = 1000.0
"""The fleet connects at this pace at the start (5 s for 5,000 clients), as a real fleet's
clients start over time rather than in one instant."""


@dataclass(frozen=True, slots=True)
class Options:
    clients: int
    duration: float
    report_dir: Path
    seed: int
    work_dir: Path


def run_gameday(scenario: Scenario, options: Options, console: Console) -> dict[str, Any]:
    raise_open_files(console)
    load_at_start = _load_average()
    console.print(f"starting the two-region topology in {options.work_dir} ...")
    began = time.monotonic()
    topology = Topology.start(
        options.work_dir,
        delivery_env=scenario.delivery_settings(options.clients),
        standby_api=scenario.standby_api,
    )
    console.print(f"topology up in {time.monotonic() - began:.1f} s")
    try:
        with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
            report = runner.run(_run(scenario, options, topology, console))
    finally:
        began = time.monotonic()
        topology.close()
        console.print(f"topology stopped in {time.monotonic() - began:.1f} s")
    report["load_average"] = {"start": load_at_start, "end": _load_average()}
    paths = write_report(report, options.report_dir)
    print_summary(report, console, paths)
    return report


async def _run(
    scenario: Scenario, options: Options, topology: Topology, console: Console
) -> dict[str, Any]:
    rng = random.Random(options.seed)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, stop.set)
    timeline = Timeline()
    timeline.record(time.monotonic(), "v0")
    views = [
        ClientView(name=f"c{i}", kind=KINDS[i % len(KINDS)], region="ab"[(i // len(KINDS)) % 2])
        for i in range(options.clients)
    ]
    ledger = EventLedger()
    tls = shared_tls()
    ramp = options.clients / RAMP_CLIENTS_PER_SECOND
    tuning = Tuning.for_fleet(options.clients)
    async with httpx.AsyncClient(verify=tls) as http:
        regions = {"a": topology.a, "b": topology.b}
        tasks = [
            asyncio.create_task(
                ProtocolClient(
                    view,
                    http=lambda: client_http(tls),
                    base_url=regions[view.region].delivery_url,
                    sdk_key=topology.keys.sdk_key,
                    client_side_id=topology.keys.client_side_id,
                    tuning=tuning,
                    rng=random.Random(rng.random()),
                    start_within=ramp,
                ).run()
            )
            for view in views
        ]
        # the SDKs initialise side by side (each waits for its first payload)
        started = await asyncio.gather(
            asyncio.to_thread(flagstaff_sdk, topology),
            asyncio.to_thread(official_sdk, topology),
            asyncio.to_thread(node_sdk, topology),
        )
        sdks: list[RealSdk] = [sdk for sdk in started if sdk is not None]
        all_views = [*views, *(sdk.view for sdk in sdks)]
        numbers = itertools.count(1)
        senders = [
            EventSender(
                http=http,
                urls=[topology.a.ingest_url, topology.b.ingest_url][:: 1 if i % 2 == 0 else -1],
                sdk_key=topology.keys.sdk_key,
                ledger=ledger,
                numbers=numbers,
            )
            for i in range(max(2, options.clients // 100))
        ]
        drain_until = [float("inf")]
        sender_tasks = [asyncio.create_task(s.run(drain_until)) for s in senders]
        drill = Drill(topology=topology, timeline=timeline, views=all_views, ledger=ledger)
        recorder = Recorder(
            started=drill.started, timeline=timeline, views=all_views, ledger=ledger
        )
        try:
            spans, interrupted = await _play(
                scenario, options, drill, recorder, sdks, stop, console
            )
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for sdk in sdks:
                await asyncio.to_thread(sdk.close)
        for sender in senders:
            sender.generating = False
        began = time.monotonic()
        drain_until[0] = began + DRAIN_SECONDS
        await asyncio.gather(*sender_tasks, return_exceptions=True)
        events = await _count_events(topology, ledger)
        console.print(f"events drained and counted in {time.monotonic() - began:.1f} s")
    report = figures(
        scenario=scenario.name,
        clients=len(all_views),
        duration_s=drill.now(),
        seed=options.seed,
        recorder=recorder,
        recovery_s=recorder.recovery_seconds(drill.fault_ended),
        events=events,
        nodes=[
            NodeFigures(
                n.name, n.usage.peak_rss_bytes, n.usage.peak_cpu_percent, n.usage.cpu_seconds
            )
            for n in topology.nodes()
        ],
        phases=spans,
        interrupted=interrupted,
    )
    checks = [] if interrupted else scenario.checks(report, drill)
    report["real_sdks"] = [
        {"name": s.view.name, "region": s.view.region, "served_at_end": s.view.value is not None}
        for s in sdks
    ]
    report["clients_with_data_at_fault"] = len(recorder.had_data)
    report["error_kinds"] = dict(sum((v.error_kinds for v in views), Counter()).most_common())
    report["proxy_failures"] = {
        p.name: dict(p.failures.most_common()) for p in topology.proxies if p.failures
    }
    report["checks"] = [c.to_json() for c in checks]
    report["passed"] = bool(checks) and all(c.passed for c in checks)
    if scenario.compare is not None:
        report["comparison"] = scenario.compare(drill)
    return report


async def _play(
    scenario: Scenario,
    options: Options,
    drill: Drill,
    recorder: Recorder,
    sdks: list[RealSdk],
    stop: asyncio.Event,
    console: Console,
) -> tuple[list[PhaseSpan], bool]:
    spans: list[PhaseSpan] = []
    with Progress(console, scenario.name, options.duration) as progress:

        async def sample(phase: str) -> None:
            for sdk in sdks:
                sdk.sample()
            for node in drill.topology.nodes():
                node.sample()
            progress.update(recorder.sample(time.monotonic(), phase))

        # warm-up: every client holds data before the first phase (not part of the figures)
        began = time.monotonic()
        ends = began + WARM_UP_SECONDS
        while not stop.is_set() and time.monotonic() < ends:
            for sdk in sdks:
                sdk.sample()
            if all(v.value is not None for v in drill.views):
                break
            await asyncio.sleep(0.1)
        progress.note(f"clients warm in {time.monotonic() - began:.1f} s")
        recorder.samples.clear()
        recorder.staleness_ms.clear()
        drill.started = recorder.started = time.monotonic()
        for phase in scenario.phases:
            if stop.is_set():
                break
            start = drill.now()
            before = {v.name for v in drill.views if v.value is not None}
            await phase.action(drill)
            if drill.fault_began is not None and recorder.fault_began is None:
                recorder.mark_fault(time.monotonic(), before)
            # the phase's time counts from the end of its action (a restart takes seconds)
            share_ends = time.monotonic() + phase.share * options.duration
            ends = max(share_ends, time.monotonic() + phase.min_seconds)
            next_edit = time.monotonic()
            while not stop.is_set() and time.monotonic() < ends:
                if drill.driving and time.monotonic() >= next_edit:
                    next_edit = time.monotonic() + EDIT_SECONDS
                    await drill.edit()
                await sample(phase.name)
                if phase.until and time.monotonic() >= share_ends and phase.until(drill):
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TICK_SECONDS)
            spans.append(PhaseSpan(phase.name, start, drill.now()))
        if stop.is_set():
            progress.note("interrupted: writing the report of what ran")
    return spans, stop.is_set()


def _load_average() -> float | None:
    """The machine's one-minute load average (what a run's figures are read against)."""
    try:
        return round(os.getloadavg()[0], 1)
    except OSError:
        return None


async def _count_events(topology: Topology, ledger: EventLedger) -> dict[str, int]:
    """Wait (bounded) until the analytics store holds every acknowledged event, then count."""
    ends = time.monotonic() + COUNT_SECONDS
    counted = None
    while time.monotonic() < ends:
        try:
            counted = await asyncio.to_thread(count_stored, topology.analytics.url, ledger)
        except Exception:  # the store (or its table) is not there yet
            counted = None
        if counted is not None and counted.lost == 0:
            break
        await asyncio.sleep(0.5)
    acknowledged = len(ledger.acknowledged)
    return {
        "sent": ledger.sent,
        "acknowledged": acknowledged,
        "lost": acknowledged if counted is None else counted.lost,
        "duplicated": 0 if counted is None else counted.duplicated,
        "unacknowledged": ledger.sent - acknowledged,
    }
