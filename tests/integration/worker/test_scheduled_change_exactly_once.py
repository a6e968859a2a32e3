"""Scheduled changes run exactly once across workers, on SQLite and PostgreSQL:

- two `flagstaff serve --role worker` processes, 50 rounds of one change due at a random moment,
  and in a third of the rounds the leader is paused (SIGSTOP) past its lease at a random moment
  and resumed, so the other takes over while the first may be mid-run: every change ran once;
- threads racing to apply one due change with the lease out of the way, 50 times: the claim and
  the unique key of the execution's audit entry let exactly one commit;
- a worker killed (SIGKILL) mid-run: on PostgreSQL inside its transaction (it has marked the
  change executed and waits for the flag's row, which the test holds); on SQLite at random
  moments around the change's time (its transaction lasts milliseconds, so most of these kills
  fall beside it: the PostgreSQL test is the one that kills inside it). After a restart each
  change has run once.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from datetime import timedelta
from pathlib import Path

import httpx
import psycopg
import pytest
from flagstaff_server.adapters.clock import system_clock
from flagstaff_server.services import scheduled_change_runs
from support.deadlines import wait_until
from support.in_process import control_plane
from support.processes import running
from worker_cluster import (
    LEASE_SECONDS,
    PROJECT,
    Cluster,
    cluster,
    shared_database,
    worker_process,
)

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.service)]
ROUNDS = 50
DEADLINE = 20.0
PAUSE_SECONDS = float(LEASE_SECONDS) + 0.5
KILL_ROUNDS = 4
"""Each restart is a cold start of several seconds on a busy machine."""


def leader_of(workers: list, job: str = "scheduled-changes") -> int | None:  # type: ignore[type-arg]
    for index, worker in enumerate(workers):
        try:
            if worker.status()["parts"]["worker"]["jobs"][job]["leader"]:
                return index
        except httpx.HTTPError:  # a paused or restarting process does not answer
            continue
    return None


@pytest.mark.parametrize("kind", BACKENDS)
def test_two_worker_processes_run_each_due_change_once(kind: str, tmp_path: Path) -> None:
    rng = random.Random(16)
    with shared_database(kind, tmp_path) as url, cluster(url) as shared:
        workers = [worker_process(url, tmp_path, f"worker-{i}") for i in (1, 2)]
        with running(*workers):
            changes: list[tuple[str, str]] = []
            for round_number in range(ROUNDS):
                key = f"flag-{round_number}"
                shared.add_flag(key)
                change_id = shared.schedule_on(key, in_seconds=rng.uniform(0.0, 0.4))
                changes.append((key, change_id))
                if round_number % 3 == 2:
                    pause_leader(workers, rng)
                wait_until(
                    lambda change_id=change_id: shared.status_of(change_id) == "executed",
                    timeout=DEADLINE,
                    what=f"round {round_number}'s change to run",
                )
        # both stopped: nothing is still on its way
        assert shared.lease_fence() >= 2, "the job never changed hands"
        for key, change_id in changes:
            assert shared.executions(change_id) == 1, key
            assert len(shared.flag_edits(key)) == 1, key
            assert shared.flag_version(key) == 2, key


def pause_leader(workers: list, rng: random.Random) -> None:  # type: ignore[type-arg]
    """SIGSTOP the leader at a random moment around the change's time, for longer than its
    lease, then SIGCONT it: meanwhile the other worker takes the job over (unless the paused one
    holds SQLite's write lock, which stalls every writer until it resumes)."""
    index = leader_of(workers)
    if index is None:
        return
    process = workers[index].process
    assert process is not None
    # the random moment and the fault's length; neither waits for anything
    time.sleep(rng.uniform(0.0, 0.4))
    process.send_signal(signal.SIGSTOP)
    try:
        time.sleep(PAUSE_SECONDS)
    finally:
        process.send_signal(signal.SIGCONT)


@pytest.mark.parametrize("kind", BACKENDS)
def test_threads_racing_past_the_lease_apply_a_change_once(kind: str, tmp_path: Path) -> None:
    rng = random.Random(61)
    with shared_database(kind, tmp_path) as url, cluster(url) as shared:
        for round_number in range(ROUNDS):
            key = f"flag-{round_number}"
            shared.add_flag(key)
            change_id = shared.schedule_on(key, in_seconds=0.5)
            outcomes = race(shared, change_id, rng)
            assert outcomes.count("executed") == 1, outcomes
            assert outcomes.count(None) == 1, outcomes
            assert shared.executions(change_id) == 1
            assert shared.flag_version(key) == 2


def race(shared: Cluster, change_id: str, rng: random.Random) -> list[str | None]:
    # the racers' clock is a second ahead, so the change is due to them without waiting
    plane = control_plane(shared.store, clock=lambda: system_clock() + timedelta(seconds=1))
    barrier = threading.Barrier(2)
    outcomes: list[str | None] = []
    jitter = [rng.uniform(0, 0.005) for _ in range(2)]

    def apply(delay: float) -> None:
        barrier.wait()
        time.sleep(delay)  # random timing between the two, not a wait for anything
        outcomes.append(
            scheduled_change_runs.execute(plane, change_id, holds_lease=lambda uow, now: True)
        )

    threads = [threading.Thread(target=apply, args=(delay,)) for delay in jitter]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


@pytest.mark.service
def test_a_worker_killed_inside_its_transaction_runs_the_change_once_after_restart(
    tmp_path: Path,
) -> None:
    with shared_database("postgresql", tmp_path) as url, cluster(url) as shared:
        shared.add_flag("f")
        blocker = psycopg.connect(url)
        try:
            blocker.execute(
                "SELECT version FROM flags WHERE project = %s AND key = 'f' FOR UPDATE", (PROJECT,)
            )
            change_id = shared.schedule_on("f", in_seconds=0.2)
            worker = worker_process(url, tmp_path, "doomed")
            with running(worker):
                wait_until(
                    lambda: waiting_on_a_lock(url) == 1,
                    timeout=DEADLINE,
                    what="the worker to mark the change and wait for the flag's row",
                )
                worker.kill()
            blocker.rollback()
        finally:
            blocker.close()
        assert shared.status_of(change_id) == "pending"
        assert shared.executions(change_id) == 0
        restarted = worker_process(url, tmp_path, "restarted")
        with running(restarted):
            wait_until(
                lambda: shared.status_of(change_id) == "executed",
                timeout=DEADLINE,
                what="the restarted worker to run the change",
            )
        assert shared.executions(change_id) == 1
        assert len(shared.flag_edits("f")) == 1
        assert shared.flag_version("f") == 2


def waiting_on_a_lock(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_worker_killed_at_random_moments_runs_each_change_once_after_restart(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    with shared_database("sqlite", tmp_path) as url, cluster(url) as shared:
        worker = worker_process(url, tmp_path, "worker")
        changes: list[tuple[str, str]] = []
        with running(worker):
            for round_number in range(KILL_ROUNDS):
                key = f"flag-{round_number}"
                shared.add_flag(key)
                change_id = shared.schedule_on(key, in_seconds=rng.uniform(0.0, 0.2))
                changes.append((key, change_id))
                time.sleep(rng.uniform(0.0, 0.4))  # the random moment of the crash
                worker.kill()
                worker.start()
                wait_until(
                    lambda change_id=change_id: shared.status_of(change_id) == "executed",
                    timeout=DEADLINE,
                    what=f"round {round_number}'s change to run after the restart",
                )
        for key, change_id in changes:
            assert shared.executions(change_id) == 1, key
            assert len(shared.flag_edits(key)) == 1, key
            assert shared.flag_version(key) == 2, key
