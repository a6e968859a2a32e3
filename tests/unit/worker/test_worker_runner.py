"""The worker's job runner on a fake clock: one worker of several runs a job (the one holding its
lease), a peer takes over once the leader stops or its lease runs out, a failing job backs off
and is reported, and `/status` and `/metrics` say what each worker knows. No sleeps: `tick` is
called directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.worker import Backlog, Job, JobRun, Worker
from flagstaff_server.worker import metrics as worker_metrics

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Clock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Recorder:
    """A job's work: which holder ran it when; `fail` makes the next runs raise."""

    runs: list[tuple[str, datetime]] = field(default_factory=list)
    fail: bool = False
    due: int = 0

    def job(self, name: str = "test", every: float = 1.0) -> Job:
        def run(job_run: JobRun) -> int:
            if self.fail:
                raise RuntimeError("the job broke")
            self.runs.append((job_run.lease.holder, job_run.now))
            return 2

        return Job(
            name=name,
            run=run,
            backlog=lambda now: Backlog(due=self.due, oldest=T0 if self.due else None),
            every=timedelta(seconds=every),
        )


def worker(store: InMemoryStore, job: Job, clock: Clock, holder: str) -> Worker:
    return Worker(store, [job], clock=clock, holder=holder, lease_ttl=timedelta(seconds=10))


def test_only_the_lease_holder_runs_a_job() -> None:
    store, clock, recorder = InMemoryStore(), Clock(), Recorder()
    job = recorder.job()
    a, b = worker(store, job, clock, "a"), worker(store, job, clock, "b")
    for _ in range(5):
        a.tick()
        b.tick()
        clock.advance(1)
    assert [holder for holder, _ in recorder.runs] == ["a"] * 5
    assert a.status()["jobs"]["test"]["leader"] is True
    assert b.status()["jobs"]["test"]["leader"] is False


def test_a_peer_takes_over_when_the_leader_stops_renewing() -> None:
    store, clock, recorder = InMemoryStore(), Clock(), Recorder()
    job = recorder.job()
    a, b = worker(store, job, clock, "a"), worker(store, job, clock, "b")
    a.tick()
    b.tick()
    # a is gone (crashed: it never releases); b waits out the lease, then runs the job
    clock.advance(9)
    b.tick()
    assert [holder for holder, _ in recorder.runs] == ["a"]
    clock.advance(1)
    b.tick()
    assert recorder.runs[-1] == ("b", T0 + timedelta(seconds=10))


def test_a_released_lease_is_taken_over_at_once() -> None:
    store, clock, recorder = InMemoryStore(), Clock(), Recorder()
    job = recorder.job()
    a, b = worker(store, job, clock, "a"), worker(store, job, clock, "b")
    a.tick()
    a.release()
    clock.advance(1)
    b.tick()
    assert [holder for holder, _ in recorder.runs] == ["a", "b"]


def test_a_job_runs_no_more_often_than_its_pause() -> None:
    store, clock, recorder = InMemoryStore(), Clock(), Recorder()
    a = worker(store, recorder.job(every=5), clock, "a")
    for _ in range(11):
        a.tick()
        clock.advance(1)
    assert [at for _, at in recorder.runs] == [T0 + timedelta(seconds=s) for s in (0, 5, 10)]


def test_a_failing_job_backs_off_and_is_reported_until_it_succeeds() -> None:
    store, clock, recorder = InMemoryStore(), Clock(), Recorder(fail=True)
    a = worker(store, recorder.job(every=1), clock, "a")
    attempts = []
    for _ in range(16):
        before = a.states["test"].errors
        a.tick()
        if a.states["test"].errors > before:
            attempts.append(clock.now)
        clock.advance(1)
    # 2, 4, 8 seconds between attempts
    assert attempts == [T0 + timedelta(seconds=s) for s in (0, 2, 6, 14)]
    status = a.status()
    assert status["status"] == "degraded"
    assert status["jobs"]["test"]["errors"] == 4
    assert status["jobs"]["test"]["lastError"] == "running: the job broke"
    recorder.fail = False
    clock.advance(100)
    a.tick()
    assert a.status()["status"] == "ok"
    assert a.status()["jobs"]["test"]["lastError"] is None


def test_status_and_metrics_show_the_backlog_and_its_lag() -> None:
    store, clock, recorder = InMemoryStore(), Clock(), Recorder(due=3)
    a = worker(store, recorder.job(), clock, "a")
    clock.advance(90)
    a.tick()
    job = a.status()["jobs"]["test"]
    assert job == {
        "leader": True,
        "due": 3,
        "lagSeconds": 90.0,
        "lastRun": (T0 + timedelta(seconds=90)).isoformat(),
        "lastRunItems": 2,
        "runs": 1,
        "items": 2,
        "errors": 0,
        "lastError": None,
    }
    lines = worker_metrics.render(a.states)
    assert 'flagstaff_worker_job_due{job="test"} 3' in lines
    assert 'flagstaff_worker_job_lag_seconds{job="test"} 90' in lines
    assert 'flagstaff_worker_job_leader{job="test"} 1' in lines
    assert 'flagstaff_worker_job_items_total{job="test"} 2' in lines


def test_job_names_must_be_unique() -> None:
    recorder = Recorder()
    with pytest.raises(ValueError, match="unique"):
        Worker(InMemoryStore(), [recorder.job(), recorder.job()], clock=Clock())
