"""Client-side streams (`/eval`, `/meval`, `/ping`, `/mping`, OFREP SSE) and their re-evaluation
when an environment's snapshot changes: coalesced over a short jittered window, then spread over
ticks under a CPU budget, with equal contexts evaluated once per change.

Runs on the event loop only. `Reevaluator.step` does one tick of work synchronously (tests drive
it with injected clocks); `run` is the actor loop around it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from flagstaff_core import Availability, Flag, FlagData, client_result, evaluate

from flagstaff_server.delivery import sse
from flagstaff_server.delivery.client_context import ClientContext
from flagstaff_server.delivery.evaluation_cache import EvaluationCache, etag_of
from flagstaff_server.delivery.fanout import Stream
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.delivery.store import Environment, EnvironmentId

log = logging.getLogger(__name__)

StreamKind = Literal["eval", "ping", "ofrep"]
"""`eval`: results for one context (put, then patch/delete/put); `ping`: a bare `ping` that makes
the client poll again; `ofrep`: OFREP's `refetchEvaluation` message carrying the new ETag."""

PING = sse.frame(b"ping", b" ")


def ofrep_view(availability: Availability) -> str:
    """The ETag view of OFREP bulk responses (shared by the bulk endpoint and its SSE stream)."""
    return "ofrep:" + availability.value


def refetch_message(etag: bytes) -> bytes:
    """An OFREP change notification: an SSE `message` (no `event:` line) per ADR-0008."""
    data = orjson.dumps({"type": "refetchEvaluation", "etag": etag.decode()})
    return b"data: " + data + b"\n\n"


def is_visible(flag: Flag | dict[str, Any], availability: Availability) -> bool:
    """Whether a client of this kind may see the flag at all (its key included)."""
    if availability is Availability.ALL:
        return True
    if isinstance(flag, Flag):
        allowed = flag.client_side_availability
        if availability is Availability.CLIENT_SIDE:
            return allowed.using_environment_id
        return allowed.using_mobile_key
    raw = flag.get("clientSideAvailability")
    if availability is Availability.CLIENT_SIDE:
        if isinstance(raw, dict):
            return bool(raw.get("usingEnvironmentId"))
        return bool(flag.get("clientSide"))
    return bool(raw.get("usingMobileKey", True)) if isinstance(raw, dict) else True


class ClientStream:
    """One open client stream: what it was last brought up to, and how to evaluate for it."""

    __slots__ = (
        "availability",
        "channel",
        "client",
        "fingerprint",
        "kind",
        "snapshot",
        "with_reasons",
    )

    def __init__(
        self,
        kind: StreamKind,
        channel: Stream,
        snapshot: Snapshot,
        *,
        client: ClientContext | None = None,
        fingerprint: bytes = b"",
        availability: Availability = Availability.ALL,
        with_reasons: bool = False,
    ) -> None:
        self.kind: StreamKind = kind
        self.channel = channel
        """Where its events go: an ASGI handler's `Channel` or the connection's `DirectStream`."""
        self.snapshot = snapshot
        """The snapshot whose results this stream's client holds."""
        self.client = client
        """The context of an `eval` stream; None for `ping` and `ofrep` streams."""
        self.fingerprint = client.fingerprint if client is not None else fingerprint
        self.availability = availability
        self.with_reasons = with_reasons

    def group(self) -> tuple[object, ...]:
        """Streams in one group get the same bytes for the same change."""
        return (
            self.kind,
            self.fingerprint,
            self.availability,
            self.with_reasons,
            id(self.snapshot),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Delta:
    """What differs between two snapshots, as an `eval` stream needs it."""

    keys: tuple[str, ...]
    """Flags whose stored item changed (added, edited, deleted)."""
    full: bool
    """A segment changed, or a changed flag is a prerequisite of another: results of flags whose
    version did not move may differ, and clients ignore patches that do not raise the version,
    so the stream gets a whole `put` instead. Likewise when a changed flag's version went down
    (the node resynchronised onto another history, docs/delivery.md "Epochs")."""
    old_items: dict[str, dict[str, Any]]
    """The changed flags as the old snapshot held them (to tell what the client could see)."""


def delta_between(old: Snapshot, new: Snapshot, data: FlagData) -> Delta:
    segments_changed = old.segments is not new.segments and any(
        old.segments.get(key) != new.segments.get(key)
        for key in old.segments.keys() | new.segments.keys()
    )
    keys: list[str] = []
    if old.flags is not new.flags:
        keys = sorted(
            key
            for key in old.flags.keys() | new.flags.keys()
            if old.flags.get(key) != new.flags.get(key)
        )
    changed = set(keys)
    dependent = bool(changed) and any(
        prerequisite.key in changed
        for flag in data.flags.values()
        for prerequisite in flag.prerequisites
    )
    old_items: dict[str, dict[str, Any]] = {}
    regressed = False
    for key in keys:
        item = old.flags.get(key)
        if item is not None:
            old_items[key] = orjson.loads(item.encoded)
            regressed = regressed or deleted_version(old, new, key) <= item.version
    full = segments_changed or dependent or regressed
    return Delta(keys=tuple(keys), full=full, old_items=old_items)


def deleted_version(old: Snapshot, new: Snapshot, key: str) -> int:
    item = new.flags.get(key)
    if item is not None:
        return item.version
    tombstone = new.tombstones.get(("flag", key))
    if tombstone is not None:
        return tombstone
    held = old.flags.get(key)
    return (held.version if held is not None else 0) + 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ReevaluationConfig:
    window_seconds: float = 0.1
    """Changes are collected this long (times 1 to 2, at random) before streams are updated: a
    burst of edits costs one pass, and nodes do not all re-evaluate at the same instant."""
    tick_seconds: float = 0.01
    budget_seconds: float = 0.005
    """CPU time a tick may spend updating streams; the rest of the tick serves requests."""
    notice_spread_seconds: float = 1.0
    """Ping and OFREP notices of one change go out evenly over this long: every notice makes its
    client poll (and evaluate), so 10k of them at once would be a storm of 10k requests."""
    sweep_seconds: float = 1.0
    heartbeat_seconds: float = 55.0


@dataclass(slots=True)
class Pass:
    """Bringing one environment's streams up to `snapshot`."""

    snapshot: Snapshot
    data: FlagData
    pending: list[ClientStream]
    """`eval` streams still to update."""
    notices: list[ClientStream]
    """`ping` and `ofrep` streams still to notify: each notice makes a client poll."""
    seen_at: float
    started: float
    notices_total: int = 0
    notified: int = 0
    deltas: dict[int, tuple[Snapshot, Delta]] = field(default_factory=dict)
    events: dict[tuple[object, ...], bytes] = field(default_factory=dict)


class Reevaluator:
    def __init__(
        self,
        environment: Callable[[EnvironmentId], Environment | None],
        cache: EvaluationCache,
        config: ReevaluationConfig | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.thread_time,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.environment = environment
        self.cache = cache
        self.config = config or ReevaluationConfig()
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.rng = rng
        self.streams: dict[EnvironmentId, set[ClientStream]] = {}
        self.counts: Counter[str] = Counter()
        self.cpu_seconds = 0.0
        """CPU time spent updating streams since start (thread time of the event loop)."""
        self.last_pass_seconds = 0.0
        """From a change being noticed to the last stream of its pass being handed its events."""
        self._seen: dict[EnvironmentId, Snapshot] = {}
        self._due: dict[EnvironmentId, tuple[float, float]] = {}
        """When each noticed change's pass may start, and when the change was noticed."""
        self._passes: dict[EnvironmentId, Pass] = {}
        self._last_sweep = float("-inf")

    @property
    def open_streams(self) -> int:
        return sum(len(streams) for streams in self.streams.values())

    def add(self, env_id: EnvironmentId, stream: ClientStream) -> None:
        self.streams.setdefault(env_id, set()).add(stream)
        self._seen.setdefault(env_id, stream.snapshot)

    def discard(self, env_id: EnvironmentId, stream: ClientStream) -> None:
        streams = self.streams.get(env_id)
        if streams is None:
            return
        streams.discard(stream)
        if not streams:
            del self.streams[env_id]
            self._seen.pop(env_id, None)
            self._due.pop(env_id, None)
            self._passes.pop(env_id, None)

    def close_all(self, reason: str) -> None:
        for streams in self.streams.values():
            for stream in streams:
                stream.channel.close(reason)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.config.tick_seconds)
            try:
                self.step()
            except Exception:
                self.counts["error"] += 1
                log.exception("client stream re-evaluation failed")

    def step(self) -> bool:
        """One tick: notice changes, start passes that are due, update streams until the CPU
        budget is spent. True while work remains."""
        now = self.clock()
        for env_id in list(self.streams):
            self._notice(env_id, now)
        if now - self._last_sweep >= self.config.sweep_seconds:
            self._last_sweep = now
            self._sweep(now)
        if not self._passes:
            return bool(self._due)
        started = self.cpu_clock()
        try:
            for env_id, work in list(self._passes.items()):
                while work.pending:
                    if self.cpu_clock() - started >= self.config.budget_seconds:
                        self.counts["budget_spent"] += 1
                        return True
                    self._update(work.pending.pop(), work)
                allowed = self._notices_allowed(work, now)
                while work.notices and work.notified < allowed:
                    if self.cpu_clock() - started >= self.config.budget_seconds:
                        self.counts["budget_spent"] += 1
                        return True
                    self._update(work.notices.pop(), work)
                    work.notified += 1
                if work.notices:
                    continue
                del self._passes[env_id]
                self.counts["pass"] += 1
                self.last_pass_seconds = self.clock() - work.seen_at
        finally:
            self.cpu_seconds += self.cpu_clock() - started
        return bool(self._passes or self._due)

    def _notices_allowed(self, work: Pass, now: float) -> int:
        """How many of the pass's notices may have gone out by `now`: a straight line from none
        at the pass's start to all after the spread (at least one per tick)."""
        spread = self.config.notice_spread_seconds
        if spread <= 0:
            return work.notices_total
        share = (now - work.started + self.config.tick_seconds) / spread
        return min(work.notices_total, max(work.notified + 1, int(work.notices_total * share)))

    def _notice(self, env_id: EnvironmentId, now: float) -> None:
        env = self.environment(env_id)
        if env is None:
            for stream in self.streams.pop(env_id, ()):
                stream.channel.close("environment deleted")
            self._seen.pop(env_id, None)
            self._due.pop(env_id, None)
            self._passes.pop(env_id, None)
            return
        snapshot = env.snapshot
        if snapshot is self._seen.get(env_id):
            return
        due = self._due.get(env_id)
        if due is None:
            window = self.config.window_seconds
            self._due[env_id] = (now + window * (1.0 + self.rng()), now)
            return
        if due[0] > now:
            return
        del self._due[env_id]
        self._seen[env_id] = snapshot
        # A newer pass replaces an unfinished one: its remaining streams are diffed from what
        # they hold to the newest snapshot, so they are never sent an intermediate state.
        streams = self.streams[env_id]
        notices = [stream for stream in streams if stream.kind != "eval"]
        self._passes[env_id] = Pass(
            snapshot=snapshot,
            data=self.cache.data(snapshot),
            pending=[stream for stream in streams if stream.kind == "eval"],
            notices=notices,
            seen_at=due[1],
            started=now,
            notices_total=len(notices),
        )

    def _update(self, stream: ClientStream, work: Pass) -> None:
        channel = stream.channel
        # a seq alone does not order snapshots: a break-glass override changes one at its seq
        held = stream.snapshot
        if channel.closing is not None or held is work.snapshot or held.seq > work.snapshot.seq:
            return
        group = stream.group()
        events = work.events.get(group)
        if events is None:
            events = self._events_for(stream, work)
            work.events[group] = events
            self.counts["evaluated_group"] += 1
        stream.snapshot = work.snapshot
        self.counts["stream_updated"] += 1
        if events and not channel.offer(events):
            channel.evict()
            self.counts["evicted"] += 1

    def _events_for(self, stream: ClientStream, work: Pass) -> bytes:
        if stream.kind == "ping":
            return PING
        if stream.kind == "ofrep":
            view = ofrep_view(stream.availability)
            return refetch_message(etag_of(work.snapshot.digest, view, stream.fingerprint))
        client = stream.client
        assert client is not None
        old = stream.snapshot
        held = work.deltas.get(id(old))
        if held is None:
            # the old snapshot is kept in the memo so its id cannot be reused during the pass
            held = (old, delta_between(old, work.snapshot, work.data))
            work.deltas[id(old)] = held
        delta = held[1]
        if not delta.keys and not delta.full:
            return b""
        if delta.full:
            evaluated = self.cache.client_results(
                work.snapshot, client, stream.availability, with_reasons=stream.with_reasons
            )
            return sse.frame(b"put", evaluated.body)
        return b"".join(self._flag_events(stream, client, delta, work, old))

    def _flag_events(
        self, stream: ClientStream, client: ClientContext, delta: Delta, work: Pass, old: Snapshot
    ) -> Iterable[bytes]:
        availability = stream.availability
        for key in delta.keys:
            flag = work.data.flag(key)
            if flag is not None and is_visible(flag, availability):
                self.counts["evaluation"] += 1
                result = client_result(
                    evaluate(flag, client.context, work.data), with_reasons=stream.with_reasons
                )
                yield sse.frame(b"patch", orjson.dumps({"key": key, **result}))
                continue
            was = delta.old_items.get(key)
            if was is not None and is_visible(was, availability):
                version = deleted_version(old, work.snapshot, key)
                yield sse.frame(b"delete", orjson.dumps({"key": key, "version": version}))

    def _sweep(self, now: float) -> None:
        """Heartbeats for idle streams, clean closes for streams past their age."""
        idle_before = now - self.config.heartbeat_seconds
        for streams in self.streams.values():
            for stream in streams:
                channel = stream.channel
                if channel.closing is not None:
                    continue
                if now >= channel.deadline:
                    self.counts["aged_out"] += 1
                    channel.close("max age")
                elif channel.last_sent <= idle_before and not channel.pending:
                    channel.offer(sse.HEARTBEAT)
