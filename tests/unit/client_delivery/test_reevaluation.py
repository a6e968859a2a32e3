"""Stream re-evaluation on change, driven step by step with injected clocks: changes are coalesced
over the jittered window, work is spread over ticks by the CPU budget, equal contexts are
evaluated once, and each stream gets exactly the events its client needs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from delivery_support import flag, segment, segment_rule_flag
from flagstaff_core import Availability
from flagstaff_server.delivery.client_context import read_context
from flagstaff_server.delivery.client_stream import (
    PING,
    ClientStream,
    ReevaluationConfig,
    Reevaluator,
    StreamKind,
    ofrep_view,
)
from flagstaff_server.delivery.evaluation_cache import EvaluationCache, etag_of
from flagstaff_server.delivery.fanout import Channel
from flagstaff_server.delivery.snapshot import (
    apply_change,
    apply_overlay,
    build_snapshot,
    rebased,
)
from flagstaff_server.delivery.store import Environment

ENV = ("p", "e")
WINDOW = 0.1
BROWSER = {"usingEnvironmentId": True, "usingMobileKey": True}


def visible(made: dict[str, Any]) -> dict[str, Any]:
    return {**made, "clientSideAvailability": BROWSER}


class Clock:
    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class World:
    """One environment whose snapshot the test advances, and a re-evaluator over it."""

    def __init__(self, *, budget: float = 1.0, cpu_step: float = 0.0, **flags: Any) -> None:
        self.clock = Clock()
        self.cpu = Clock(cpu_step)
        self.seq = 1
        snapshot = build_snapshot(*ENV, seq=1, flags=flags, segments={})
        self.env = Environment(project="p", key="e", snapshot=snapshot)
        self.present = True
        self.reevaluator = Reevaluator(
            lambda env_id: self.env if self.present and env_id == ENV else None,
            EvaluationCache(),
            ReevaluationConfig(window_seconds=WINDOW, budget_seconds=budget, heartbeat_seconds=30),
            clock=self.clock,
            cpu_clock=self.cpu,
            rng=lambda: 0.5,
        )

    def change(self, kind: str, key: str, item: dict[str, Any] | None, version: int) -> None:
        self.seq += 1
        applied = apply_change(
            self.env.snapshot,
            seq=self.seq,
            kind=kind,  # type: ignore[arg-type]
            key=key,
            version=version,
            item=item,
            log_limit=10,
        )
        assert applied is not None
        self.env.snapshot = applied.snapshot

    def stream(
        self,
        kind: StreamKind = "eval",
        key: str = "u-1",
        availability: Availability = Availability.CLIENT_SIDE,
    ) -> ClientStream:
        channel = Channel("v1", limit=8, deadline=float("inf"), now=0.0)
        client = read_context({"kind": "user", "key": key}) if kind == "eval" else None
        made = ClientStream(
            kind,
            channel,
            self.env.snapshot,
            client=client,
            fingerprint=b"fp",
            availability=availability,
        )
        self.reevaluator.add(ENV, made)
        return made

    def run_until_idle(self, at: float) -> int:
        """Step from clock time `at`, one 10 ms tick apart, until no work remains; returns the
        number of steps."""
        self.clock.now = at
        steps = 1
        while self.reevaluator.step():
            self.clock.now += 0.01
            steps += 1
            assert steps < 1000
        return steps


def events(stream: ClientStream) -> list[tuple[str, Any]]:
    """The SSE events queued for `stream` (and consumed)."""
    raw = b"".join(stream.channel.pending).decode()
    stream.channel.pending.clear()
    parsed = []
    for block in raw.split("\n\n"):
        if not block:
            continue
        lines = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
        parsed.append((lines.get("event", "message"), json.loads(lines["data"] or "null")))
    return parsed


def test_changes_within_the_window_make_one_pass_with_the_final_state() -> None:
    world = World(a=visible(flag("a")), b=visible(flag("b")))
    stream = world.stream()
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    assert world.reevaluator.step() is True  # noticed: due at 0 + 0.1 * 1.5
    world.clock.now = 0.1
    world.change("flag", "b", visible(flag("b", 2, fallthrough=0)), 2)
    world.reevaluator.step()
    assert not stream.channel.pending
    world.run_until_idle(at=0.2)
    got = events(stream)
    assert [(name, data["key"], data["value"]) for name, data in got] == [
        ("patch", "a", False),
        ("patch", "b", False),
    ]
    assert world.reevaluator.counts["pass"] == 1
    assert stream.snapshot is world.env.snapshot


def test_nothing_is_sent_before_the_window_ends() -> None:
    world = World(a=visible(flag("a")))
    stream = world.stream()
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    for at in (0.0, 0.05, 0.1, 0.149):
        world.clock.now = at
        world.reevaluator.step()
        assert not stream.channel.pending
    world.run_until_idle(at=0.16)
    assert [name for name, _ in events(stream)] == ["patch"]


def test_equal_contexts_are_evaluated_once_per_change() -> None:
    world = World(a=visible(flag("a")))
    same = [world.stream(key="same") for _ in range(50)]
    distinct = [world.stream(key=f"u-{n}") for n in range(20)]
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    world.reevaluator.step()
    world.run_until_idle(at=1.0)
    counts = world.reevaluator.counts
    assert counts["evaluation"] == 1 + 20
    assert counts["stream_updated"] == 70
    first = same[0].channel.pending[0]
    assert all(stream.channel.pending[0] is first for stream in same)
    assert all(len(events(stream)) == 1 for stream in same + distinct)


def test_cpu_budget_spreads_a_pass_over_ticks() -> None:
    # every cpu clock read advances 1 ms, a tick may spend 5 ms
    world = World(budget=0.005, cpu_step=0.001, a=visible(flag("a")))
    streams = [world.stream(key=f"u-{n}") for n in range(30)]
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    world.reevaluator.step()
    steps = world.run_until_idle(at=1.0)
    assert steps >= 30 // 5
    assert world.reevaluator.counts["budget_spent"] >= 5
    assert all(len(events(stream)) == 1 for stream in streams)
    assert world.reevaluator.counts["stream_updated"] == 30
    assert world.reevaluator.cpu_seconds > 0


def test_a_newer_change_during_a_pass_skips_the_intermediate_state() -> None:
    world = World(budget=0.003, cpu_step=0.001, a=visible(flag("a")))
    streams = [world.stream(key=f"u-{n}") for n in range(10)]
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    world.reevaluator.step()
    world.clock.now = 1.0
    assert world.reevaluator.step() is True  # part of the pass done
    world.change("flag", "a", visible(flag("a", 3, fallthrough=1)), 3)
    world.run_until_idle(at=2.0)
    for stream in streams:
        versions = [data["version"] for _, data in events(stream)]
        # streams updated before the second change saw 2 then 3; the rest went straight to 3
        assert versions in ([2, 3], [3])
        assert stream.snapshot is world.env.snapshot


def test_flags_the_client_cannot_see_send_nothing() -> None:
    world = World(a=visible(flag("a")), hidden=flag("hidden"))
    browser = world.stream()
    server = world.stream(availability=Availability.ALL)
    world.change("flag", "hidden", flag("hidden", 2, fallthrough=0), 2)
    world.reevaluator.step()
    world.run_until_idle(at=1.0)
    assert events(browser) == []
    assert [(name, data["key"]) for name, data in events(server)] == [("patch", "hidden")]


def test_deletions_and_availability_loss_are_deletes_with_a_higher_version() -> None:
    world = World(a=visible(flag("a", 4)), b=visible(flag("b", 4)), hidden=flag("hidden"))
    stream = world.stream()
    world.change("flag", "a", None, 5)
    world.change("flag", "b", flag("b", 6), 6)  # no longer available to browsers
    world.change("flag", "hidden", None, 2)  # never visible: its key must not leak
    world.reevaluator.step()
    world.run_until_idle(at=1.0)
    assert events(stream) == [
        ("delete", {"key": "a", "version": 5}),
        ("delete", {"key": "b", "version": 6}),
    ]


def test_segment_and_prerequisite_changes_send_a_whole_put() -> None:
    dependent = visible({**flag("child"), "prerequisites": [{"key": "parent", "variation": 1}]})
    world = World(
        parent=visible(flag("parent")),
        child=dependent,
        member=visible(segment_rule_flag("member", "s")),
    )
    stream = world.stream()
    world.change("segment", "s", segment("s", 2, included=("u-1",)), 2)
    world.reevaluator.step()
    world.run_until_idle(at=1.0)
    [(name, put)] = events(stream)
    assert name == "put"
    assert put["member"]["value"] is True
    world.change("flag", "parent", visible(flag("parent", 2, fallthrough=0)), 2)
    world.reevaluator.step()
    world.run_until_idle(at=2.0)
    [(name, put)] = events(stream)
    assert name == "put"
    assert put["child"]["value"] is False  # prerequisite no longer met: off variation


def test_a_resync_onto_lower_versions_sends_a_whole_put() -> None:
    world = World(a=visible(flag("a", 8)), b=visible(flag("b", 8)))
    stream = world.stream()
    # a node resynchronised onto a restored database: `a` is back at version 5, off, and
    # `b` is gone with a tombstone below what the client holds
    world.env.snapshot = rebased(
        build_snapshot(
            *ENV,
            seq=1,
            flags={"a": visible(flag("a", 5, on=False))},
            segments={},
            tombstones={("flag", "b"): 3},
        ),
        epoch=2,
        seq=1_000_003,
    )
    world.reevaluator.step()
    world.run_until_idle(at=1.0)
    [(name, put)] = events(stream)
    assert name == "put"
    assert put.keys() == {"a"}
    assert (put["a"]["version"], put["a"]["value"]) == (5, False)


def test_ping_and_ofrep_streams_get_their_notices() -> None:
    world = World(a=visible(flag("a")))
    ping = world.stream("ping")
    notice = world.stream("ofrep")
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    world.reevaluator.step()
    world.run_until_idle(at=1.0)
    assert b"".join(ping.channel.pending) == PING
    expected = etag_of(world.env.snapshot.digest, ofrep_view(Availability.CLIENT_SIDE), b"fp")
    assert events(notice) == [("message", {"type": "refetchEvaluation", "etag": expected.decode()})]


def test_removed_environment_closes_its_streams() -> None:
    world = World(a=visible(flag("a")))
    stream = world.stream()
    world.present = False
    world.reevaluator.step()
    assert stream.channel.closing == "environment deleted"
    assert world.reevaluator.open_streams == 0


def test_idle_streams_get_heartbeats_and_old_ones_are_closed() -> None:
    world = World(a=visible(flag("a")))
    idle = world.stream()
    old = world.stream(key="u-2")
    old.channel.deadline = 40.0
    world.clock.now = 31.0
    world.reevaluator.step()
    assert b"".join(idle.channel.pending) == b":\n\n"
    world.clock.now = 41.0
    world.reevaluator.step()
    assert old.channel.closing == "max age"
    assert idle.channel.closing is None


@pytest.mark.parametrize("kind", ["eval", "ping", "ofrep"])
def test_discarded_streams_are_forgotten(kind: StreamKind) -> None:
    world = World(a=visible(flag("a")))
    stream = world.stream(kind)
    world.reevaluator.discard(ENV, stream)
    assert world.reevaluator.open_streams == 0
    assert world.reevaluator.streams == {}


def test_ping_and_ofrep_notices_are_spread_but_eval_streams_are_not() -> None:
    world = World(a=visible(flag("a")))
    notices = [world.stream("ping") for _ in range(60)] + [world.stream("ofrep") for _ in range(40)]
    results = [world.stream(key=f"u-{n}") for n in range(10)]
    world.change("flag", "a", visible(flag("a", 2, fallthrough=0)), 2)
    world.reevaluator.step()  # noticed at 0, due at 0.15

    def told() -> int:
        return sum(bool(stream.channel.pending) for stream in notices)

    world.clock.now = 0.2
    assert world.reevaluator.step() is True  # the pass starts: every eval stream at once
    assert all(stream.channel.pending for stream in results)
    assert 1 <= told() <= 2
    world.clock.now = 0.7
    world.reevaluator.step()
    assert 45 <= told() <= 55  # half the spread (1 s), half the notices
    world.run_until_idle(at=0.8)
    assert told() == 100
    assert world.clock.now >= 1.19
    assert world.reevaluator.counts["pass"] == 1


def test_a_change_made_at_the_snapshots_own_seq_reaches_eval_streams() -> None:
    """A break-glass override is applied at the snapshot's seq (`apply_overlay`): streams must
    get it although the seq did not move."""
    world = World(a=visible(flag("a")))
    stream = world.stream()
    applied = apply_overlay(
        world.env.snapshot, kind="flag", key="a", version=2, item=visible(flag("a", 2, on=False))
    )
    assert applied is not None
    assert applied.snapshot.seq == world.env.snapshot.seq
    world.env.snapshot = applied.snapshot
    world.reevaluator.step()
    world.run_until_idle(at=0.2)
    assert [(name, data["key"], data["value"]) for name, data in events(stream)] == [
        ("patch", "a", False)
    ]
    assert stream.snapshot is world.env.snapshot
