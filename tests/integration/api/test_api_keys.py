"""SDK and mobile key resets: a new key at once, the old one accepted for the grace period (or
until `expiry`), and delivery told through an "environment" change carrying both."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.services.ports import CredentialKind
from platform_api import ADMIN, create_project, problem
from support.clock import FakeClock

URL = "/api/v2/projects/shop/environments/production"


def opens(server: Flagstaff, kind: CredentialKind, value: str, clock: FakeClock) -> str | None:
    """The environment key a credential opens right now, per the store."""
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        record = uow.environments.find_by_credential(kind, value, clock())
    return None if record is None else record.key


@pytest.mark.parametrize(
    ("endpoint", "field", "kind"),
    [("apiKey", "apiKey", "sdk"), ("mobileKey", "mobileKey", "mobile")],
)
async def test_reset_key_keeps_old_key_for_the_grace_period(
    client: httpx.AsyncClient,
    server: Flagstaff,
    clock: FakeClock,
    endpoint: str,
    field: str,
    kind: CredentialKind,
) -> None:
    await create_project(client, "shop")
    old = (await client.get(URL, headers=ADMIN)).json()
    reset = await client.post(f"{URL}/{endpoint}", headers=ADMIN)
    assert reset.status_code == 200, reset.text
    new = reset.json()
    assert new[field] != old[field]
    assert new["_id"] == old["_id"]
    untouched = "mobileKey" if field == "apiKey" else "apiKey"
    assert new[untouched] == old[untouched]
    grace = timedelta(seconds=server.settings.key_grace_seconds)
    assert opens(server, kind, new[field], clock) == "production"
    clock.advance(seconds=grace.total_seconds() - 1)
    assert opens(server, kind, old[field], clock) == "production"
    clock.advance(seconds=2)
    assert opens(server, kind, old[field], clock) is None
    assert opens(server, kind, new[field], clock) == "production"


async def test_expiry_parameter_sets_when_the_old_key_stops(
    client: httpx.AsyncClient, server: Flagstaff, clock: FakeClock
) -> None:
    await create_project(client, "shop")
    old = (await client.get(URL, headers=ADMIN)).json()["apiKey"]
    expiry = clock.millis + 60_000
    assert (await client.post(f"{URL}/apiKey?expiry={expiry}", headers=ADMIN)).status_code == 200
    clock.advance(seconds=59)
    assert opens(server, "sdk", old, clock) == "production"
    clock.advance(seconds=2)
    assert opens(server, "sdk", old, clock) is None


async def test_expiry_in_the_past_retires_the_old_key_at_once(
    client: httpx.AsyncClient, server: Flagstaff, clock: FakeClock
) -> None:
    await create_project(client, "shop")
    old = (await client.get(URL, headers=ADMIN)).json()["apiKey"]
    reset = await client.post(f"{URL}/apiKey?expiry={clock.millis - 1}", headers=ADMIN)
    assert reset.status_code == 200
    assert opens(server, "sdk", old, clock) is None


async def test_reset_tells_delivery_the_new_and_retired_keys(
    client: httpx.AsyncClient, server: Flagstaff, clock: FakeClock
) -> None:
    await create_project(client, "shop")
    old = (await client.get(URL, headers=ADMIN)).json()["apiKey"]
    new = (await client.post(f"{URL}/apiKey", headers=ADMIN)).json()["apiKey"]
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        last = uow.changes.since(uow.changes.latest_seq() - 1)[-1]
    assert (last.kind, last.environment, last.key) == ("environment", "production", "production")
    assert last.item is not None
    assert last.item["sdkKey"] == new
    [retired] = last.item["retired"]
    assert retired["kind"] == "sdk"
    assert retired["value"] == old
    grace = server.settings.key_grace_seconds
    assert retired["expires"] == pytest.approx(clock().timestamp() + grace)


async def test_second_reset_keeps_both_earlier_keys_inside_their_grace(
    client: httpx.AsyncClient, server: Flagstaff, clock: FakeClock
) -> None:
    await create_project(client, "shop")
    first = (await client.get(URL, headers=ADMIN)).json()["apiKey"]
    second = (await client.post(f"{URL}/apiKey", headers=ADMIN)).json()["apiKey"]
    clock.advance(minutes=1)
    third = (await client.post(f"{URL}/apiKey", headers=ADMIN)).json()["apiKey"]
    assert len({first, second, third}) == 3
    for key in (first, second, third):
        assert opens(server, "sdk", key, clock) == "production"


async def test_reset_on_missing_environment_is_404_and_bad_expiry_is_400(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    problem(await client.post("/api/v2/projects/shop/environments/none/apiKey", headers=ADMIN), 404)
    for expiry in ("soon", "-1", "253402300800000"):
        body = problem(await client.post(f"{URL}/apiKey?expiry={expiry}", headers=ADMIN), 400)
        assert body["path"] == "expiry"
