"""The cache of callers verified by access token: entries expire, a write that may change a caller
drops them all (also one read while it committed), and flag or segment writes keep them."""

from __future__ import annotations

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.errors import Unauthorized
from flagstaff_server.services.access import SYSTEM, Actor, hash_secret, stored_caller
from flagstaff_server.services.caller_cache import CallerCache
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.tokens import TokenRequest, create_token, revoke_token
from support.in_process import control_plane

READER = Actor(token_id="t1", name="bot", role="reader")


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_entry_answers_until_its_time_is_up() -> None:
    ticks = Ticks()
    cache = CallerCache(ttl=1.0, clock=ticks)
    cache.put("h", READER, generation=cache.generation())
    ticks.now = 0.99
    assert cache.get("h") == READER
    ticks.now = 1.0
    assert cache.get("h") is None


def test_forgetting_drops_entries_and_a_caller_read_before_it() -> None:
    cache = CallerCache()
    cache.put("h", READER, generation=cache.generation())
    in_flight = cache.generation()  # a lookup that started before the write committed
    cache.forget_all()
    assert cache.get("h") is None
    cache.put("h", READER, generation=in_flight)
    assert cache.get("h") is None
    cache.put("h", READER, generation=cache.generation())
    assert cache.get("h") == READER


def test_the_oldest_entry_goes_past_the_bound() -> None:
    cache = CallerCache(max_entries=2)
    for name in ("a", "b", "c"):
        cache.put(name, READER, generation=cache.generation())
    assert [cache.get(name) is not None for name in ("a", "b", "c")] == [False, True, True]


def token(plane: ControlPlane) -> tuple[str, str]:
    created = create_token(plane, SYSTEM, TokenRequest(name="bot", role="reader"))
    return str(created["_id"]), hash_secret(str(created["token"]))


def cached(plane: ControlPlane, secret_hash: str) -> None:
    with plane.read() as uow:
        actor = stored_caller(uow, secret_hash)
    plane.callers.put(secret_hash, actor, generation=plane.callers.generation())


def test_revoking_in_this_process_drops_cached_callers_but_a_flag_write_does_not() -> None:
    plane = control_plane(InMemoryStore())
    token_id, secret_hash = token(plane)
    cached(plane, secret_hash)
    with plane.write(SYSTEM) as tx:
        tx.audit(kind="flag", resource="proj/p:env/*:flag/f", action="updateOn")
    assert plane.callers.get(secret_hash) is not None
    revoke_token(plane, SYSTEM, token_id)
    assert plane.callers.get(secret_hash) is None


def test_a_write_without_an_audit_entry_drops_cached_callers() -> None:
    plane = control_plane(InMemoryStore())
    _, secret_hash = token(plane)
    cached(plane, secret_hash)
    with plane.write(SYSTEM):
        pass
    assert plane.callers.get(secret_hash) is None


def test_another_process_refuses_a_revoked_token_once_its_entry_expires() -> None:
    store = InMemoryStore()
    here = control_plane(store)
    ticks = Ticks()
    there = ControlPlane(
        store=store,
        feed=here.feed,
        clock=here.clock,
        key_grace=here.key_grace,
        callers=CallerCache(ttl=1.0, clock=ticks),
    )
    token_id, secret_hash = token(here)
    cached(there, secret_hash)
    revoke_token(here, SYSTEM, token_id)
    assert there.callers.get(secret_hash) is not None  # within the documented second
    ticks.now = 1.0
    assert there.callers.get(secret_hash) is None
    with there.read() as uow, pytest.raises(Unauthorized):
        stored_caller(uow, secret_hash)
