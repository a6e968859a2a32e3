"""A standby promoted by other tools (`pg_promote()` through the cluster harness, not `flagstaff dr
promote`) while `flagstaff serve --role api` runs on it: the API starts a new epoch by itself
within seconds, with no write to trigger it, on the new timeline; the next write through the API
then lands in that epoch, its seq past the gap and its version past the version gap."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.epochs import SEQ_GAP, VERSION_GAP
from flagstaff_server.services.ports import EpochRecord
from regions_support import postgres_cluster
from support.deadlines import wait_until
from support.management import admin_client, create_flag, create_project, switch
from support.processes import ServeProcess, running

pytestmark = [pytest.mark.service, pytest.mark.slow]

ADMIN = "epoch-promotion-admin-token-0123"


def api_process(tmp: Path, region: str, database: str) -> ServeProcess:
    return ServeProcess(
        data_dir=tmp / f"{region}-api",
        name=f"{region}-api",
        admin_token=ADMIN,
        inherit_flagstaff_variables=False,
        env={"FLAGSTAFF_REGION": region},
        args=["--role", "api", "--database", database],
    )


def epochs_of(store: SqlStore) -> list[EpochRecord]:
    with store.unit_of_work(read_only=True) as uow:
        return uow.epochs.list()


def test_an_api_on_a_standby_promoted_by_other_tools_starts_the_epoch_by_itself(
    tmp_path: Path,
) -> None:
    with postgres_cluster() as cluster:
        a = cluster.start_primary("a")
        b = cluster.start_standby(a, "b")
        a_api = api_process(tmp_path, "a", a.url)
        with running(a_api), admin_client(a_api.url, ADMIN) as api_a:
            create_project(api_a)
            create_flag(api_a, "banner")
            b.wait_for_replay(a.wal_lsn())
        store = SqlStore(b.url, region="b")
        try:
            with store.unit_of_work(read_only=True) as uow:
                head = uow.changes.latest_seq()
                banner = uow.flags.get("shop", "banner")
            assert banner is not None
            assert [(e.epoch, e.timeline) for e in epochs_of(store)] == [(1, 1)]
            b_api = api_process(tmp_path, "b", b.url)
            with running(b_api), admin_client(b_api.url, ADMIN) as api_b:
                a.kill()
                b.promote()  # what a cloud console or `pg_ctl promote` does
                epochs = wait_until(
                    lambda: len(found := epochs_of(store)) == 2 and found,
                    timeout=30,
                    what="B's API to start epoch 2 by itself",
                )
                started = epochs[1]
                assert (started.timeline, started.reason, started.started_after_seq) == (
                    2,
                    "timeline",
                    head,
                )
                switch(api_b, "banner", on=True)
            with store.unit_of_work(read_only=True) as uow:
                after = uow.changes.since(head)
                jumped = uow.flags.get("shop", "banner")
        finally:
            store.close()
    assert [(c.kind, c.epoch) for c in after] == [("epoch", 2), ("flag", 2)]
    assert after[0].seq == head + SEQ_GAP + 1
    assert jumped is not None
    assert jumped.version == banner.version + VERSION_GAP + 1
    old = banner.doc["environments"]["production"]["version"]
    assert after[1].version == old + VERSION_GAP + 1
