"""The Flagstaff SDK against a real `flagstaff serve`: with the event endpoint down for a while
(503, then acknowledgements lost after the server stored the payload) and then back, every
evaluation count and every custom event shows in Flagstaff's insights exactly once."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from flagstaff_sdk import Client, Config, Context, Endpoint, Timing
from flagstaff_sdk.events import EventOptions, sink_factory
from flagstaff_server.gameday.fault_proxy import Fault, FaultProxy
from integration.ingest.ingest_support import evaluation_totals, metric_events
from integration.scaleout.scaleout_cluster import (
    SETTLE_SECONDS,
    ServerProcess,
    admin_client,
    create_project,
    switch_on,
)
from support.deadlines import wait_until
from support.management import create_flag, is_on
from support.processes import running

pytestmark = pytest.mark.slow

FLAG = "checkout"
METRIC = "purchase"
BULK = ("/bulk",)


class Workload:
    """The client's evaluations and custom events, with the totals the server must end up with."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.evaluations = 0
        self.customs = 0

    def run(self, evaluations: int, customs: int) -> None:
        for n in range(evaluations):
            assert self.client.variation(FLAG, Context.create(f"user-{n % 7}"), "default") == "on"
            self.evaluations += 1
        for n in range(customs):
            self.client.track(METRIC, Context.create(f"user-{n % 7}"), None, float(n))
            self.customs += 1
        self.client.flush()


def ingest_status(server: ServerProcess) -> dict[str, int]:
    status: dict[str, int] = server.status()["parts"]["ingest"]
    return status


def failed_attempts(client: Client) -> int:
    stats = client.event_stats()
    assert stats is not None
    return stats.failed_attempts


def settled(client: Client, server: ServerProcess) -> bool:
    """Nothing left in the SDK's spool and everything the server stored has been processed."""
    stats = client.event_stats()
    assert stats is not None
    ingest = ingest_status(server)
    return stats.spooled_payloads == 0 and ingest["processedSeq"] == ingest["durableSeq"]


def counted(api: httpx.Client, workload: Workload) -> bool:
    totals = evaluation_totals(api, FLAG)
    return totals.get("0", 0) >= workload.evaluations and (
        metric_events(api, METRIC) >= workload.customs
    )


def test_sdk_events_arrive_exactly_once_at_ingestion_across_an_outage(tmp_path: Path) -> None:
    server = ServerProcess(args=[], data_dir=tmp_path / "node")
    with running(server), admin_client(server.url) as api:
        sdk_key = create_project(api)
        create_flag(api, FLAG)
        switch_on(api, FLAG)
        # delivery applies the switch from the change feed a moment after the API stored it: an
        # SDK started before that would evaluate the flag off
        wait_until(lambda: is_on(server.url, sdk_key, FLAG), what="delivery to serve the flag on")
        proxy = FaultProxy(server.port)
        with proxy.running():
            events = sink_factory(
                EventOptions(
                    flush_interval=0.1,
                    retry_delays=(0.05, 0.05),
                    spool_retry_interval=0.1,
                    spool_retry_max=0.3,
                    drain_interval=0.01,
                    close_timeout=10.0,
                    spool_dir=tmp_path / "spool",
                    diagnostic_opt_out=True,
                )
            )
            # only events go through the proxy: flag data keeps streaming from the server
            endpoint = Endpoint(stream_uri=server.url, poll_uri=server.url, events_uri=proxy.url)
            client = Client(
                Config(
                    sdk_key,
                    endpoints=(endpoint,),
                    init_timeout=30.0,
                    event_sink=events,
                    timing=Timing(connect_timeout=1.0, read_timeout=2.0),
                )
            )
            try:
                assert client.wait_for_initialization(30.0)
                workload = Workload(client)

                workload.run(evaluations=40, customs=10)
                wait_until(
                    lambda: counted(api, workload), timeout=20, what="events before the outage"
                )

                # down, answering 503: nothing reaches the server, batches wait in the spool
                proxy.set(Fault(kind="status", status=503), paths=BULK)
                failed = failed_attempts(client)
                workload.run(evaluations=200, customs=50)
                wait_until(
                    lambda: failed_attempts(client) >= failed + 3,
                    timeout=SETTLE_SECONDS,
                    what="deliveries failing while the endpoint answers 503",
                )
                workload.run(evaluations=60, customs=15)

                # down, losing acknowledgements: the server stores each payload but the SDK sees
                # a dropped connection and sends the same payload (same id) again
                duplicates = ingest_status(server)["duplicates"]
                proxy.set(Fault(kind="close", after_bytes=0), paths=BULK)
                workload.run(evaluations=100, customs=25)
                wait_until(
                    lambda: ingest_status(server)["duplicates"] >= duplicates + 2,
                    timeout=SETTLE_SECONDS,
                    what="retried payloads reaching the server while acknowledgements are lost",
                )

                proxy.heal()
                workload.run(evaluations=30, customs=5)
                wait_until(
                    lambda: counted(api, workload) and settled(client, server),
                    timeout=30,
                    what="every event delivered and processed after the endpoint came back",
                )
            finally:
                client.close()

        assert evaluation_totals(api, FLAG) == {"0": workload.evaluations}
        assert metric_events(api, METRIC) == workload.customs
        stats = client.event_stats()
        assert stats is not None
        assert stats.dropped_total == 0
        ingest = ingest_status(server)
        # each payload the SDK finally saw acknowledged was appended once; every resend of one
        # the server already held was answered without a second append
        assert ingest["accepted"] == stats.delivered_payloads
        assert ingest["duplicates"] > duplicates
        assert proxy.count("/bulk") > stats.delivered_payloads
