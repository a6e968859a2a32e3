"""The storage contract: every Store adapter (memory, SQLite, PostgreSQL) behaves the same."""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.ports import (
    AuditEntry,
    EnvironmentRecord,
    FlagRecord,
    ProjectRecord,
    RetiredCredential,
    SegmentRecord,
    Store,
    TokenRecord,
    UnitOfWork,
)

T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


def project(key: str = "p", **changes: object) -> ProjectRecord:
    record = ProjectRecord(key=key, name=key.upper(), tags=("a", "b"), doc={"d": 1}, created=T0)
    return replace(record, **changes)  # type: ignore[arg-type]


def environment(key: str = "e", project_key: str = "p", **changes: object) -> EnvironmentRecord:
    record = EnvironmentRecord(
        project=project_key,
        key=key,
        name=key.upper(),
        sdk_key=f"sdk-{project_key}-{key}",
        mobile_key=f"mob-{project_key}-{key}",
        client_side_id=hashlib.sha1(f"{project_key}/{key}".encode()).hexdigest()[:24],
        secure_mode=False,
        doc={"color": "ff0000"},
        created=T0,
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def flag(key: str = "f", version: int = 1, project_key: str = "p") -> FlagRecord:
    doc = {"key": key, "_version": version, "environments": {"e": {"on": True, "version": 1}}}
    return FlagRecord(project=project_key, key=key, version=version, doc=doc)


def segment(key: str = "s", version: int = 1) -> SegmentRecord:
    doc = {"key": key, "included": ["u1"], "version": version}
    return SegmentRecord(project="p", environment="e", key=key, version=version, doc=doc)


def audit_entry(entry_id: str, at: datetime, resource: str = "proj/p:env/e:flag/f") -> AuditEntry:
    return AuditEntry(
        id=entry_id,
        at=at,
        actor="token:t1",
        kind="flag",
        resource=resource,
        action="updateOn",
        comment="why",
        patch=[{"op": "replace", "path": "/on", "value": True}],
        before={"on": False},
        after={"on": True},
    )


def append_change(uow: UnitOfWork, key: str = "f", version: int = 1) -> int:
    return uow.changes.append(
        project="p",
        environment="e",
        kind="flag",
        key=key,
        version=version,
        item={"key": key, "version": version},
        at=T0,
    )


def seed(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.projects.add(project())
        uow.environments.add(environment())


# --- projects ---------------------------------------------------------------------------------


def test_project_round_trips_with_every_field(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.projects.add(project())
    with store.unit_of_work(read_only=True) as uow:
        assert uow.projects.get("p") == project()
        assert uow.projects.get("missing") is None


def test_projects_list_in_key_order_and_replace_and_delete(store: Store) -> None:
    with store.unit_of_work() as uow:
        for key in ("b", "c", "a"):
            uow.projects.add(project(key))
    with store.unit_of_work() as uow:
        uow.projects.replace(project("b", name="renamed", tags=()))
        uow.projects.delete("c")
    with store.unit_of_work(read_only=True) as uow:
        assert [(p.key, p.name, p.tags) for p in uow.projects.list()] == [
            ("a", "A", ("a", "b")),
            ("b", "renamed", ()),
        ]


def test_project_add_twice_is_already_exists(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.projects.add(project())
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.projects.add(project(name="other"))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.projects.get("p") == project()


def test_missing_project_cannot_be_replaced_or_deleted(store: Store) -> None:
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.projects.replace(project())
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.projects.delete("p")


def test_records_handed_out_are_copies(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        record = uow.projects.get("p")
        assert record is not None
        record.doc["d"] = 999
        uow.flags.add(flag())
    with store.unit_of_work(read_only=True) as uow:
        assert uow.projects.get("p") == project()


def test_deleting_a_project_removes_its_environments_flags_and_segments(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.projects.add(project("other"))
        uow.environments.add(environment("e", "other"))
        uow.flags.add(flag())
        uow.flags.add(flag(project_key="other"))
        uow.segments.add(segment())
    with store.unit_of_work() as uow:
        uow.projects.delete("p")
    with store.unit_of_work(read_only=True) as uow:
        assert uow.environments.list("p") == []
        assert uow.flags.list("p") == []
        assert uow.segments.list("p", "e") == []
        assert uow.environments.find_by_credential("sdk", "sdk-p-e", T0) is None
        assert [f.key for f in uow.flags.list("other")] == ["f"]
        assert [e.project for e in uow.environments.list()] == ["other"]


# --- environments -----------------------------------------------------------------------------


def test_environment_round_trips_with_retired_credentials(store: Store) -> None:
    retired = (
        RetiredCredential(kind="sdk", value="sdk-old", expires=T0 + timedelta(hours=1)),
        RetiredCredential(kind="mobile", value="mob-old", expires=T0 + timedelta(hours=2)),
    )
    with store.unit_of_work() as uow:
        uow.projects.add(project())
        uow.environments.add(environment(retired=retired, secure_mode=True))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.environments.get("p", "e") == environment(retired=retired, secure_mode=True)


def test_environment_needs_its_project(store: Store) -> None:
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.environments.add(environment())


def test_environments_list_per_project_and_overall(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.projects.add(project("p"))
        uow.projects.add(project("q"))
        uow.environments.add(environment("prod", "q"))
        uow.environments.add(environment("test", "p"))
        uow.environments.add(environment("dev", "p"))
    with store.unit_of_work(read_only=True) as uow:
        assert [e.key for e in uow.environments.list("p")] == ["dev", "test"]
        everything = [(e.project, e.key) for e in uow.environments.list()]
        assert everything == [("p", "dev"), ("p", "test"), ("q", "prod")]


def test_environment_key_and_credentials_are_unique(store: Store) -> None:
    seed(store)
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.environments.add(environment(name="again"))
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.environments.add(environment("e2", sdk_key="sdk-p-e"))
    with store.unit_of_work(read_only=True) as uow:
        assert [e.key for e in uow.environments.list("p")] == ["e"]


def test_deleting_an_environment_removes_its_segments(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.segments.add(segment())
    with store.unit_of_work() as uow:
        uow.environments.delete("p", "e")
    with store.unit_of_work() as uow:
        uow.environments.add(environment())
        assert uow.segments.list("p", "e") == []
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.environments.delete("p", "gone")


def test_credentials_find_their_environment(store: Store) -> None:
    seed(store)
    env = environment()
    with store.unit_of_work(read_only=True) as uow:
        assert uow.environments.find_by_credential("sdk", env.sdk_key, T0) == env
        assert uow.environments.find_by_credential("mobile", env.mobile_key, T0) == env
        assert uow.environments.find_by_credential("client_side", env.client_side_id, T0) == env
        # a key of another kind opens nothing
        assert uow.environments.find_by_credential("mobile", env.sdk_key, T0) is None
        assert uow.environments.find_by_credential("sdk", "sdk-unknown", T0) is None


def test_reset_key_works_until_its_grace_period_ends(store: Store) -> None:
    seed(store)
    expires = T0 + timedelta(hours=1)
    reset = environment(
        sdk_key="sdk-new",
        retired=(RetiredCredential(kind="sdk", value="sdk-p-e", expires=expires),),
    )
    with store.unit_of_work() as uow:
        uow.environments.replace(reset)
    with store.unit_of_work(read_only=True) as uow:
        find = uow.environments.find_by_credential
        assert find("sdk", "sdk-new", T0) == reset
        assert find("sdk", "sdk-p-e", T0) == reset
        assert find("sdk", "sdk-p-e", expires - timedelta(milliseconds=1)) == reset
        assert find("sdk", "sdk-p-e", expires) is None
        assert find("mobile", "sdk-p-e", T0) is None
    with store.unit_of_work() as uow:
        uow.environments.replace(replace(reset, retired=()))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.environments.find_by_credential("sdk", "sdk-p-e", T0) is None


# --- flags and segments -----------------------------------------------------------------------


def test_flag_add_get_list(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.flags.add(flag("b"))
        uow.flags.add(flag("a"))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.flags.get("p", "a") == flag("a")
        assert uow.flags.get("p", "zz") is None
        assert [f.key for f in uow.flags.list("p")] == ["a", "b"]
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.flags.add(flag("a", version=7))
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.flags.add(flag(project_key="nope"))


def test_flag_replace_is_compare_and_set(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.flags.add(flag())
    with store.unit_of_work() as uow:
        uow.flags.replace(flag(version=2), expected_version=1)
    with pytest.raises(VersionConflict) as conflict, store.unit_of_work() as uow:
        uow.flags.replace(flag(version=3), expected_version=1)
    assert conflict.value.path == "/_version"
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.flags.replace(flag("missing", version=2), expected_version=1)
    with store.unit_of_work(read_only=True) as uow:
        assert uow.flags.get("p", "f") == flag(version=2)


def test_flag_delete_checks_the_version_when_given(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.flags.add(flag("a", version=3))
        uow.flags.add(flag("b"))
    with pytest.raises(VersionConflict), store.unit_of_work() as uow:
        uow.flags.delete("p", "a", expected_version=2)
    with store.unit_of_work() as uow:
        uow.flags.delete("p", "a", expected_version=3)
        uow.flags.delete("p", "b")
    with store.unit_of_work(read_only=True) as uow:
        assert uow.flags.list("p") == []
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.flags.delete("p", "a")


def test_segments_are_per_environment_with_compare_and_set(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.environments.add(environment("e2"))
        uow.segments.add(segment("b"))
        uow.segments.add(segment("a"))
        uow.segments.add(replace(segment("a"), environment="e2"))
    with store.unit_of_work() as uow:
        uow.segments.replace(segment("a", version=2), expected_version=1)
    with pytest.raises(VersionConflict), store.unit_of_work() as uow:
        uow.segments.replace(segment("a", version=9), expected_version=1)
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.segments.add(segment("b"))
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.segments.add(replace(segment("c"), environment="none"))
    with store.unit_of_work() as uow:
        uow.segments.delete("p", "e", "b", expected_version=1)
    with store.unit_of_work(read_only=True) as uow:
        assert uow.segments.list("p", "e") == [segment("a", version=2)]
        assert uow.segments.get("p", "e2", "a") == replace(segment("a"), environment="e2")
        assert uow.segments.get("p", "e", "b") is None


# --- tokens and audit -------------------------------------------------------------------------


def token(token_id: str, created: datetime = T0, **changes: object) -> TokenRecord:
    record = TokenRecord(
        id=token_id,
        name=f"name-{token_id}",
        role="writer",
        secret_hash=f"hash-{token_id}",
        project="p",
        environment=None,
        created=created,
        doc={"hint": "abcd"},
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def test_tokens_are_found_by_hash_listed_and_revoked(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.tokens.add(token("t2", T0))
        uow.tokens.add(token("t1", T0 + timedelta(seconds=1), role="admin", project=None))
    with store.unit_of_work() as uow:
        assert uow.tokens.find_by_secret_hash("hash-t1") == token(
            "t1", T0 + timedelta(seconds=1), role="admin", project=None
        )
        assert uow.tokens.find_by_secret_hash("hash-none") is None
        uow.tokens.replace(token("t2", revoked=T0 + timedelta(days=1)))
    with store.unit_of_work(read_only=True) as uow:
        assert [t.id for t in uow.tokens.list()] == ["t2", "t1"]
        revoked = uow.tokens.get("t2")
        assert revoked is not None
        assert revoked.revoked == T0 + timedelta(days=1)
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.tokens.add(token("t3", secret_hash="hash-t1"))
    with pytest.raises(NotFound), store.unit_of_work() as uow:
        uow.tokens.replace(token("t9"))


def test_audit_lists_newest_first_with_filters(store: Store) -> None:
    with store.unit_of_work() as uow:
        for i in range(5):
            uow.audit.append(audit_entry(f"a{i}", T0 + timedelta(minutes=i)))
        uow.audit.append(audit_entry("other", T0, resource="proj/q:env/e:flag/f"))
        uow.audit.append(audit_entry("wild", T0, resource="proj/pxx:env/e"))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.audit.get("a1") == audit_entry("a1", T0 + timedelta(minutes=1))
        recent = uow.audit.list(resource_prefix="proj/p:", limit=3)
        assert [e.id for e in recent] == ["a4", "a3", "a2"]
        window = uow.audit.list(since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=3))
        assert [e.id for e in window] == ["a2", "a1"]
        # the prefix is literal: `_` and `%` are not wildcards
        assert uow.audit.list(resource_prefix="proj/p_x") == []
        assert uow.audit.list(resource_prefix="proj/%") == []
        assert {e.id for e in uow.audit.list(kind="flag")} == {f"a{i}" for i in range(5)} | {
            "other",
            "wild",
        }
        assert uow.audit.list(kind="segment") == []
    with pytest.raises(AlreadyExists), store.unit_of_work() as uow:
        uow.audit.append(audit_entry("a1", T0))


def test_audit_entries_of_one_millisecond_list_last_appended_first(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.audit.append(audit_entry("z1", T0))
        uow.audit.append(audit_entry("a2", T0))
    with store.unit_of_work() as uow:
        uow.audit.append(audit_entry("m3", T0))
        uow.audit.append(audit_entry("older", T0 - timedelta(milliseconds=1)))
    with store.unit_of_work(read_only=True) as uow:
        assert [e.id for e in uow.audit.list()] == ["m3", "a2", "z1", "older"]


# --- transactions and the outbox --------------------------------------------------------------


class Boom(Exception):
    pass


def test_an_exception_rolls_back_everything(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.flags.add(flag())
        append_change(uow)

    def edit_then_fail() -> None:
        with store.unit_of_work() as uow:
            uow.flags.replace(flag(version=2), expected_version=1)
            uow.flags.add(flag("new"))
            uow.environments.delete("p", "e")
            uow.audit.append(audit_entry("x", T0))
            assert append_change(uow, version=2) == 2
            raise Boom

    with pytest.raises(Boom):
        edit_then_fail()
    with store.unit_of_work(read_only=True) as uow:
        assert uow.flags.list("p") == [flag()]
        assert uow.environments.get("p", "e") == environment()
        assert uow.audit.list() == []
        assert uow.changes.latest_seq() == 1
        assert [c.seq for c in uow.changes.since(0)] == [1]
    with store.unit_of_work() as uow:
        # the rolled-back number is handed out again: no gap
        assert append_change(uow, version=2) == 2


def test_a_read_only_unit_of_work_refuses_writes(store: Store) -> None:
    with pytest.raises(RuntimeError), store.unit_of_work(read_only=True) as uow:
        uow.projects.add(project())
    with store.unit_of_work(read_only=True) as uow:
        assert uow.projects.list() == []


def test_changes_are_numbered_and_replayable_from_any_seq(store: Store) -> None:
    with store.unit_of_work(read_only=True) as uow:
        assert uow.changes.latest_seq() == 0
        assert uow.changes.since(0) == []
    seqs = []
    for version in range(1, 8):
        with store.unit_of_work() as uow:
            seqs.append(append_change(uow, version=version))
    with store.unit_of_work() as uow:
        deleted = uow.changes.append(
            project="p", environment="e", kind="segment", key="s", version=4, item=None, at=T0
        )
    assert [*seqs, deleted] == list(range(1, 9))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.changes.latest_seq() == 8
        for start in range(9):
            assert [c.seq for c in uow.changes.since(start)] == list(range(start + 1, 9))
        page = uow.changes.since(2, limit=3)
        assert [(c.seq, c.version, c.item) for c in page] == [
            (3, 3, {"key": "f", "version": 3}),
            (4, 4, {"key": "f", "version": 4}),
            (5, 5, {"key": "f", "version": 5}),
        ]
        last = uow.changes.since(7)[0]
        assert (last.kind, last.key, last.item, last.at) == ("segment", "s", None, T0)


def test_times_are_kept_to_the_millisecond(store: Store) -> None:
    precise = datetime(2026, 3, 1, 12, 0, 0, 123999, tzinfo=UTC)
    with store.unit_of_work() as uow:
        uow.projects.add(project(created=precise))
    with store.unit_of_work(read_only=True) as uow:
        stored = uow.projects.get("p")
        assert stored is not None
        assert stored.created == T0


# --- concurrency ------------------------------------------------------------------------------

WRITERS = 10


def test_concurrent_compare_and_set_has_exactly_one_winner(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.flags.add(flag())
    barrier = threading.Barrier(WRITERS)

    def write(writer: int) -> str:
        barrier.wait()
        try:
            with store.unit_of_work() as uow:
                uow.flags.replace(flag(version=2), expected_version=1)
                uow.audit.append(audit_entry(f"w{writer}", T0))
                append_change(uow, version=2)
        except VersionConflict:
            return "conflict"
        return f"w{writer}"

    with ThreadPoolExecutor(WRITERS) as pool:
        outcomes = list(pool.map(write, range(WRITERS)))
    winners = [o for o in outcomes if o != "conflict"]
    assert len(winners) == 1
    assert outcomes.count("conflict") == WRITERS - 1
    with store.unit_of_work(read_only=True) as uow:
        assert uow.flags.get("p", "f") == flag(version=2)
        assert [e.id for e in uow.audit.list()] == winners
        assert [c.seq for c in uow.changes.since(0)] == [1]


def test_concurrent_appends_commit_in_seq_order_without_gaps(store: Store) -> None:
    per_writer, writers = 15, 6
    done = threading.Event()
    holes: list[list[int]] = []

    def write(_: int) -> None:
        for _i in range(per_writer):
            with store.unit_of_work() as uow:
                append_change(uow)

    def read() -> None:
        # whatever a reader sees must be a prefix 1..n: a later seq is never visible first
        while not done.is_set():
            with store.unit_of_work(read_only=True) as uow:
                seen = [c.seq for c in uow.changes.since(0, limit=10_000)]
            if seen != list(range(1, len(seen) + 1)):
                holes.append(seen)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(write, range(writers)))
    finally:
        done.set()
        reader.join()
    assert holes == []
    with store.unit_of_work(read_only=True) as uow:
        total = per_writer * writers
        assert [c.seq for c in uow.changes.since(0, limit=10_000)] == list(range(1, total + 1))
        assert uow.changes.latest_seq() == total


def test_locked_read_modify_writes_all_apply_one_after_another(store: Store) -> None:
    seed(store)
    with store.unit_of_work() as uow:
        uow.flags.add(flag())
    barrier = threading.Barrier(WRITERS)

    def increment(_: int) -> None:
        barrier.wait()
        with store.unit_of_work() as uow:
            current = uow.flags.get("p", "f", for_update=True)
            assert current is not None
            uow.flags.replace(flag(version=current.version + 1), current.version)
            append_change(uow, version=current.version + 1)

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(increment, range(WRITERS)))
    with store.unit_of_work(read_only=True) as uow:
        assert uow.flags.get("p", "f") == flag(version=WRITERS + 1)
        versions = [c.version for c in uow.changes.since(0)]
        assert versions == list(range(2, WRITERS + 2))
