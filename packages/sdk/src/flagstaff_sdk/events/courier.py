"""The courier: one thread that owns the HTTP client, the spool and the choice of events
endpoint, and delivers batches oldest first with their fixed payload id, backing off while the
endpoints are down. Endpoints fail over and come back as the stream's do (`region`): the first
healthy one is used; while a fallback is in use, the next batch is offered to the better ones
every `probe_interval`.

Must not build events; the actor hands it finished batches.
"""

from __future__ import annotations

import gzip
import logging
import queue
import threading
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

from flagstaff_sdk.clock import Clock
from flagstaff_sdk.config import Endpoint, Timing
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.events.spool import Batch, Spool
from flagstaff_sdk.events.stats import DropReason, StatsCounter
from flagstaff_sdk.region import Region, RegionSet

log = logging.getLogger(__name__)

EVENT_SCHEMA = "4"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    body: bytes


@dataclass(frozen=True, slots=True)
class Barrier:
    """Set once every job queued before it has been attempted (tests and `close`)."""

    done: threading.Event


@dataclass(frozen=True, slots=True)
class Stop:
    timeout: float


_Job = Batch | Diagnostic | Barrier | Stop


def is_recoverable(status: int) -> bool:
    """LaunchDarkly's rule: 4xx other than 400, 408 and 429 will not get better by retrying."""
    return not 400 <= status < 500 or status in (400, 408, 429)


class Courier:
    def __init__(
        self,
        *,
        endpoints: tuple[Endpoint, ...],
        timing: Timing,
        headers: dict[str, str],
        options: EventOptions,
        spool: Spool,
        stats: StatsCounter,
        clock: Clock,
        timeout: httpx.Timeout,
    ) -> None:
        self._regions = RegionSet(endpoints, fdv1=False, threshold=timing.failover_after_failures)
        self._probe_interval = timing.probe_interval
        self._next_probe: float | None = None
        """While a fallback endpoint is in use: when the better ones are next offered a batch."""
        self._headers = {
            **headers,
            "Content-Type": "application/json",
            "X-LaunchDarkly-Event-Schema": EVENT_SCHEMA,
        }
        self._options = options
        self._spool = spool
        self._stats = stats
        self._clock = clock
        self._http = httpx.Client(transport=options.transport, timeout=timeout)
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._retry_at: float | None = None
        self._retry_wait = options.spool_retry_interval
        self.last_server_time_ms = 0
        """The service's clock (`Date` header) at the last response; read by the actor."""
        self._thread = threading.Thread(target=self._run, name="flagstaff-events-courier")
        self._thread.daemon = True
        if len(spool):
            self._retry_at = clock.monotonic()  # batches left by an earlier process go first
        self._publish_spool()

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: Batch | Diagnostic | Barrier) -> None:
        self._jobs.put(job)

    def stop(self, timeout: float) -> None:
        """Try what is waiting once more within `timeout`, then close the HTTP client."""
        self._stopping.set()
        self._jobs.put(Stop(timeout))
        self._thread.join(timeout + 1.0)

    # the thread --------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self._idle_timeout())
            except queue.Empty:
                job = None
            try:
                if isinstance(job, Stop):
                    self._finish(job.timeout)
                    return
                self._handle(job)
            except Exception:
                # a bug or a full disk must not end delivery for the life of the client
                log.exception("Flagstaff event delivery failed unexpectedly")
                self._schedule_retry()

    def _idle_timeout(self) -> float | None:
        if self._retry_at is None or not len(self._spool) or self._stats.disabled:
            return None
        return max(0.0, self._retry_at - self._clock.monotonic())

    def _handle(self, job: Batch | Diagnostic | Barrier | None) -> None:
        if isinstance(job, Barrier):
            job.done.set()
            return
        if isinstance(job, Diagnostic):
            if not self._stats.disabled:
                self._post(self._regions.pick(), "/diagnostic", job.body, {})
            return
        if isinstance(job, Batch):
            if self._stats.disabled:
                self._stats.drop(DropReason.DISABLED, job.events)
                return
            self._keep(job)
            if self._retry_at is not None and self._clock.monotonic() < self._retry_at:
                return  # the endpoint is backing off; this batch waits its turn
        self._deliver_spool(self._options.retry_delays)

    def _keep(self, batch: Batch) -> None:
        for old in self._spool.add(batch):
            self._stats.drop(DropReason.SPOOL_FULL, old.events)
        self._publish_spool()

    def _publish_spool(self) -> None:
        self._stats.set(spooled_payloads=len(self._spool), spooled_bytes=self._spool.size)

    def _deliver_spool(self, delays: tuple[float, ...], deadline: float | None = None) -> bool:
        """Send spooled batches oldest first until one fails; True when the spool is empty."""
        while (batch := self._spool.head()) is not None:
            if self._stats.disabled:
                return False
            if not self._send(batch, delays, deadline):
                self._schedule_retry()
                return False
            self._spool.remove_head()
            self._publish_spool()
            self._stats.add("delivered_events", batch.events)
            self._stats.add("delivered_payloads")
            self._retry_at = None
            self._retry_wait = self._options.spool_retry_interval
        return True

    def _schedule_retry(self) -> None:
        self._retry_at = self._clock.monotonic() + self._retry_wait
        self._retry_wait = min(self._retry_wait * 2, self._options.spool_retry_max)

    def _send(self, batch: Batch, delays: tuple[float, ...], deadline: float | None) -> bool:
        """One delivery cycle: an attempt, then one more after each delay, each to the endpoint
        `regions.pick()` names then (a failover waits only the first delay); the same payload id
        every time and everywhere, so the service (every region's, sharing one analytics store)
        can drop the copies it already has."""
        headers = {"X-LaunchDarkly-Payload-ID": batch.payload_id}
        if deadline is None and self._probe(batch, headers):
            return True
        previous: Region | None = None
        for attempt in range(len(delays) + 1):
            region = self._regions.pick()
            if attempt:
                delay = delays[attempt - 1]
                if region is not previous:
                    delay = min(delay, delays[0])
                if deadline is not None and self._clock.monotonic() + delay > deadline:
                    return False
                if deadline is None and self._stopping.wait(delay):
                    return False  # closing: the final pass takes over
            timeout = None
            if deadline is not None:
                remaining = deadline - self._clock.monotonic()
                if remaining <= 0:
                    return False
                timeout = httpx.Timeout(remaining)  # closing: no request may outlive the deadline
            if self._post(region, "/bulk", batch.body, headers, timeout):
                return True
            if self._stats.disabled:
                return False
            previous = region
        return False

    def _probe(self, batch: Batch, headers: dict[str, str]) -> bool:
        """While a fallback endpoint is in use, every `probe_interval` (counted from the
        failover) offer `batch` to the better endpoints first, one attempt each; the first that
        accepts it is healthy again and used from then on (as the stream returns to a preferred
        region its probe found answering). True when one accepted it."""
        due = self._next_probe
        now = self._clock.monotonic()
        if due is None or now < due:
            return False
        self._next_probe = now + self._probe_interval
        current = self._regions.first_healthy()
        # none healthy: `pick` takes each in turn, the preferred ones included
        for region in [] if current is None else self._regions.better_than(current):
            if self._post(region, "/bulk", batch.body, headers):
                return True
            if self._stats.disabled:
                return False
        return False

    def _accepted_by(self, region: Region) -> None:
        self._regions.succeeded(region)
        self._stats.set(endpoint=region.name)
        if region.index == 0:
            self._next_probe = None
        elif self._next_probe is None:
            self._next_probe = self._clock.monotonic() + self._probe_interval

    def _post(
        self,
        region: Region,
        path: str,
        body: bytes,
        headers: dict[str, str],
        timeout: httpx.Timeout | None = None,
    ) -> bool:
        """One attempt to `region`'s events URI; its outcome counts toward the region's health
        (a recoverable failure is one of the consecutive failures that fail it over)."""
        uri = f"{region.endpoint.events_uri}{path}"
        headers = {**self._headers, **headers}
        if self._options.compress:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        try:
            if timeout is None:
                response = self._http.post(uri, content=body, headers=headers)
            else:
                response = self._http.post(uri, content=body, headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            self._stats.add("failed_attempts")
            self._regions.failed(region)
            log.info("Flagstaff events: %s failed: %s", uri, exc)
            return False
        self._remember_server_time(response.headers.get("Date"))
        status = response.status_code
        self._stats.set(last_status=status)
        if 200 <= status < 300:
            self._accepted_by(region)
            return True
        self._stats.add("failed_attempts")
        self._regions.failed(region)
        if not is_recoverable(status):
            log.error("Flagstaff events: %s answered %d; no more events will be sent", uri, status)
            self._stats.set(disabled=True)
        return False

    def _remember_server_time(self, date: str | None) -> None:
        if date is None:
            return
        try:
            self.last_server_time_ms = int(parsedate_to_datetime(date).timestamp() * 1000)
        except (TypeError, ValueError):
            return

    def _finish(self, timeout: float) -> None:
        deadline = self._clock.monotonic() + timeout
        try:
            while True:  # take what the actor handed over last
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if isinstance(job, Batch):
                    if self._stats.disabled:
                        self._stats.drop(DropReason.DISABLED, job.events)
                    else:
                        self._keep(job)
                elif isinstance(job, Barrier):
                    job.done.set()
            if not self._stats.disabled and timeout > 0:
                self._deliver_spool((), deadline)
            if len(self._spool) and self._options.spool_dir is None:
                left = 0
                while (batch := self._spool.head()) is not None:
                    left += batch.events
                    self._spool.remove_head()
                self._stats.drop(DropReason.UNDELIVERED_AT_CLOSE, left)
                self._publish_spool()
        finally:
            self._http.close()
