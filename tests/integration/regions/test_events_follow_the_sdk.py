"""Events follow the SDK across regions, with real processes: region A (PostgreSQL primary,
`--role api`, `--role delivery`, `--role ingest`) and region B (a hot standby of A's database,
`--role delivery`, `--role ingest`), both ingest nodes processing into ONE analytics PostgreSQL (a
throwaway database), and a `flagstaff relay` whose event upstreams are A's and B's ingest nodes.
Two clients of the project's SDK send while the faults happen: one with A and B as its
endpoints, one through the relay. Each ingest node sits behind a tap (its load balancer) that
writes down what the node stored and can lose its answers.

1. A's answers are lost after A stored the payloads, and A is SIGKILLed: the SDK and the relay
   fail over to B with the same payload ids (retries stored in both regions);
2. B's answers are lost while A is restarted: the batches B stored are retried to A, which
   takes them (stored in both regions the other way round) and the clients are back on A;
3. A refuses (503) for a moment: both move to B, and once A answers a probe brings them back;
4. at the end every event each client recorded is counted exactly once in the analytics store
   and the insights API, nothing was dropped, and no payload was quarantined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from flagstaff_sdk import Client, Config, Context, Endpoint, Timing
from flagstaff_sdk.events import EventOptions, EventProcessorFactory, sink_factory
from ingest_tap import IngestTap, Ledger
from integration.relay.relay_support import RelayProcess, relay_config
from regions_support import postgres_cluster
from support.deadlines import wait_until
from support.management import Keys, admin_client, create_flag, create_project, ok
from support.processes import ServeProcess, running
from support.services import postgres_database

pytestmark = [pytest.mark.service, pytest.mark.slow]

ADMIN = "regions-events-admin-token-0123456789"
FLAG = "checkout"
METRIC = "purchase"
PHASE_SECONDS = 60.0
"""How long one phase may take on a loaded two-core machine (bounds, not speed claims)."""
RESTART_SECONDS = 150.0
"""A phase that includes a cold start of A's ingest node."""
PROBE_SECONDS = 2.0


def region_process(
    tmp: Path, region: str, role: str, database: str, analytics: str
) -> ServeProcess:
    return ServeProcess(
        data_dir=tmp / f"{region}-{role}",
        name=f"{region}-{role}",
        admin_token=ADMIN,
        inherit_flagstaff_variables=False,
        env={"FLAGSTAFF_REGION": region, "FLAGSTAFF_ANALYTICS_DATABASE_URL": analytics},
        args=["--role", role, "--database", database],
    )


def event_options(spool: Path) -> EventOptions:
    return EventOptions(
        flush_interval=0.1,
        retry_delays=(0.05, 0.05),
        spool_retry_interval=0.1,
        spool_retry_max=0.3,
        drain_interval=0.01,
        close_timeout=15.0,
        spool_dir=spool,
        diagnostic_opt_out=True,
    )


class Workload:
    """One client's evaluations and custom events (each custom event carries its own index as
    its metric value, so a duplicate or a loss shows on its own)."""

    def __init__(self, client: Client, events: EventProcessorFactory, keys: Keys) -> None:
        self.client = client
        self.events = events
        self.keys = keys
        self.evaluations = 0
        self.customs = 0

    def step(self) -> None:
        for n in range(5):
            self.client.variation(FLAG, Context.create(f"user-{n}"), "default")
            self.evaluations += 1
        self.client.track(METRIC, Context.create("buyer"), None, float(self.customs))
        self.customs += 1
        self.client.flush()


def keep_sending_until(
    workloads: list[Workload],
    condition: Callable[[], object],
    *,
    what: str,
    timeout: float,
    ledger: Ledger,
) -> None:
    """Each workload takes a step every 0.1 s until `condition` holds."""

    def stepped() -> object:
        for workload in workloads:
            workload.step()
        return condition()

    wait_until(stepped, timeout=timeout, what=what, interval=0.1, state=ledger.summary)


def ingest_status(process: ServeProcess) -> dict[str, Any]:
    status: dict[str, Any] = process.status()["parts"]["ingest"]
    return status


def settled(process: ServeProcess) -> bool:
    status = ingest_status(process)
    return bool(status["processedSeq"] == status["durableSeq"])


def custom_multiplicity(analytics: str, project: str) -> dict[float, int]:
    """How often each custom event (by its metric value) is in the analytics store."""
    with psycopg.connect(analytics) as connection:
        rows = connection.execute(
            "SELECT metric_value, count(*) FROM ingest_custom_events"
            " WHERE project = %s AND environment = 'production' AND key = %s"
            " GROUP BY metric_value",
            (project, METRIC),
        ).fetchall()
    return {float(value): int(count) for value, count in rows}


@dataclass(kw_only=True)
class Regions:
    """The processes, taps and keys of a run."""

    a_delivery: ServeProcess
    a_ingest: ServeProcess
    b_delivery: ServeProcess
    b_ingest: ServeProcess
    relay: RelayProcess
    tap_a: IngestTap
    tap_b: IngestTap
    ledger: Ledger
    direct: Keys
    """The environment of the client with both regions as endpoints (project `shop`)."""
    relayed: Keys
    """The environment of the client behind the relay (project `edge`)."""

    @property
    def keys(self) -> list[str]:
        return [self.direct.sdk_key, self.relayed.sdk_key]


def test_events_follow_the_sdk_and_the_relay_across_regions_and_count_once(
    tmp_path: Path,
) -> None:
    with postgres_cluster() as cluster, postgres_database("flagstaff_analytics") as analytics:
        a = cluster.start_primary("a")
        b = cluster.start_standby(a, "b")
        a_api = region_process(tmp_path, "a", "api", a.url, analytics)
        a_delivery = region_process(tmp_path, "a", "delivery", a.url, analytics)
        a_ingest = region_process(tmp_path, "a", "ingest", a.url, analytics)
        b_delivery = region_process(tmp_path, "b", "delivery", b.url, analytics)
        b_ingest = region_process(tmp_path, "b", "ingest", b.url, analytics)
        with running(a_api, a_delivery, a_ingest), admin_client(a_api.url, ADMIN) as api:
            direct = create_project(api, "shop")
            relayed = create_project(api, "edge")
            for project in ("shop", "edge"):
                create_flag(api, FLAG, project=project)
            b.wait_for_replay(a.wal_lsn())  # B's nodes start with A's schema and keys
            ledger = Ledger()
            tap_a = IngestTap("a", a_ingest.port, ledger)
            tap_b = IngestTap("b", b_ingest.port, ledger)
            relay = RelayProcess(
                data_dir=tmp_path / "relay",
                inherit_flagstaff_variables=False,
                config=relay_config(
                    [a_delivery.url, b_delivery.url],
                    relayed,
                    extra='project = "edge"',
                    events=(
                        f'upstream = ["{tap_a.url}", "{tap_b.url}"]\n'
                        f"probe_seconds = {PROBE_SECONDS}"
                    ),
                ),
            )
            regions = Regions(
                a_delivery=a_delivery,
                a_ingest=a_ingest,
                b_delivery=b_delivery,
                b_ingest=b_ingest,
                relay=relay,
                tap_a=tap_a,
                tap_b=tap_b,
                ledger=ledger,
                direct=direct,
                relayed=relayed,
            )
            with tap_a.running(), tap_b.running(), running(b_delivery, b_ingest, relay):
                workloads = send_through_the_faults(tmp_path, regions)
                check_counts(api, analytics, regions, workloads)


def clients(tmp: Path, regions: Regions) -> list[Workload]:
    """The client with both regions as endpoints (delivery node and tapped ingest node each),
    and the client behind the relay."""
    timing = Timing(
        failover_after_failures=2,
        probe_interval=PROBE_SECONDS,
        connect_timeout=1.0,
        read_timeout=5.0,
    )
    endpoints = tuple(
        Endpoint(stream_uri=delivery.url, poll_uri=delivery.url, events_uri=tap.url, name=name)
        for name, delivery, tap in (
            ("a", regions.a_delivery, regions.tap_a),
            ("b", regions.b_delivery, regions.tap_b),
        )
    )
    direct_events = sink_factory(event_options(tmp / "direct-spool"))
    relayed_events = sink_factory(event_options(tmp / "relayed-spool"))
    direct = Client(
        Config(
            regions.direct.sdk_key,
            endpoints=endpoints,
            init_timeout=30.0,
            event_sink=direct_events,
            timing=timing,
        )
    )
    relayed = Client(
        Config(
            regions.relayed.sdk_key,
            base_uri=regions.relay.url,
            init_timeout=30.0,
            event_sink=relayed_events,
            timing=timing,
        )
    )
    return [
        Workload(direct, direct_events, regions.direct),
        Workload(relayed, relayed_events, regions.relayed),
    ]


def send_through_the_faults(tmp: Path, regions: Regions) -> list[Workload]:
    ledger, keys = regions.ledger, regions.keys
    workloads = clients(tmp, regions)
    try:
        for workload in workloads:
            assert workload.client.wait_for_initialization(30.0)

        # both regions up: events go to the preferred region, A
        mark = ledger.mark()
        keep_sending_until(
            workloads,
            lambda: all(ledger.stored_in("a", key, since=mark) for key in keys),
            what="events stored in region A",
            timeout=PHASE_SECONDS,
            ledger=ledger,
        )

        # 1. A stores payloads but its answers are lost, then A is SIGKILLed
        mark = ledger.mark()
        regions.tap_a.set("lose_acks")
        keep_sending_until(
            workloads,
            lambda: all(ledger.lost_in("a", key, since=mark) for key in keys),
            what="region A storing payloads whose answers are lost",
            timeout=PHASE_SECONDS,
            ledger=ledger,
        )
        regions.a_ingest.kill()
        regions.tap_a.set("pass")
        killed = ledger.mark()
        keep_sending_until(
            workloads,
            lambda: all(
                ledger.crossed("a", "b", key) and ledger.stored_in("b", key, since=killed)
                for key in keys
            ),
            what="retries of what A stored landing in B, and new events going to B",
            timeout=PHASE_SECONDS,
            ledger=ledger,
        )

        # 2. B's answers are lost while A comes back: what B stored is retried to A
        regions.tap_b.set("lose_acks")
        regions.a_ingest.launch()
        keep_sending_until(
            workloads,
            lambda: all(ledger.crossed("b", "a", key) for key in keys),
            what="retries of what B stored landing in the restarted A",
            timeout=RESTART_SECONDS,
            ledger=ledger,
        )
        regions.tap_b.set("pass")
        regions.a_ingest.wait_started()
        mark = ledger.mark()
        keep_sending_until(
            workloads,
            lambda: all(ledger.stored_in("a", key, since=mark) for key in keys),
            what="both clients sending to A again",
            timeout=PHASE_SECONDS,
            ledger=ledger,
        )

        # 3. A refuses for a moment: both move to B; a probe brings them back once A answers
        mark = ledger.mark()
        regions.tap_a.set("refuse")
        keep_sending_until(
            workloads,
            lambda: all(
                ledger.refused_by("a", key, since=mark) and ledger.stored_in("b", key, since=mark)
                for key in keys
            ),
            what="events failing over to B while A refuses",
            timeout=PHASE_SECONDS,
            ledger=ledger,
        )
        regions.tap_a.set("pass")
        mark = ledger.mark()
        keep_sending_until(
            workloads,
            lambda: all(ledger.stored_in("a", key, since=mark) for key in keys),
            what="a probe bringing events back to A",
            timeout=PHASE_SECONDS,
            ledger=ledger,
        )
        assert regions.relay.status()["events"]["upstream"] == regions.tap_a.url
    finally:
        for workload in workloads:
            workload.client.close()
    for workload in workloads:
        stats = workload.events.stats()
        assert stats is not None
        assert (stats.dropped_total, stats.spooled_payloads) == (0, 0), stats
    direct_stats = workloads[0].events.stats()
    assert direct_stats is not None
    assert direct_stats.endpoint == "a"
    wait_until(
        lambda: regions.relay.status()["events"]["spooled"] == 0,
        timeout=PHASE_SECONDS,
        what="the relay's spool forwarded",
    )
    for node in (regions.a_ingest, regions.b_ingest):
        wait_until(
            lambda node=node: settled(node),
            timeout=PHASE_SECONDS,
            what=f"{node.name} to process its journal",
        )
    return workloads


def check_counts(
    api: httpx.Client, analytics: str, regions: Regions, workloads: list[Workload]
) -> None:
    for workload, project in zip(workloads, ("shop", "edge"), strict=True):
        series = ok(api.get(f"/api/v2/insights/{project}/production/flags/{FLAG}/evaluations"))
        assert series["totals"] == {"1": workload.evaluations}, project
        metric = ok(api.get(f"/api/v2/insights/{project}/production/metrics/{METRIC}"))
        assert metric["events"] == workload.customs, project
        assert custom_multiplicity(analytics, project) == {
            float(n): 1 for n in range(workload.customs)
        }, project
    ledger = regions.ledger
    retried_to_a: set[str] = set()
    for key in regions.keys:
        assert ledger.crossed("a", "b", key)
        retried_to_a |= ledger.crossed("b", "a", key)
    statuses = [ingest_status(node) for node in (regions.a_ingest, regions.b_ingest)]
    assert [s["quarantined"] for s in statuses] == [0, 0]
    # a payload B stored and the restarted A stored again was counted by one of the two
    # processors and skipped by the other, both alive since (A's counters start at its restart;
    # what A stored before it may have been skipped there, uncounted now)
    assert sum(s["duplicatesProcessed"] for s in statuses) >= len(retried_to_a) > 0
