"""The status page with real processes (a private PostgreSQL, the API, an ingestion node, a
delivery node and a relay): a notice posted through the API reaches the delivery node's page and,
through the delivery node's feed, the relay's; then with the API killed and its database gone,
both pages are still served, still show the notice, say that the API and the database are
unreachable and since when, and the delivery node's data age grows. A delivery node restarted
during the outage shows the same from its disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from status_page_support import components, feed, host, platform
from support.deadlines import wait_until
from support.processes import loopback_get

pytestmark = [pytest.mark.service, pytest.mark.slow]

SETTLE_SECONDS = 30.0


def test_the_page_outlives_the_control_plane_and_keeps_its_notices(tmp_path: Path) -> None:
    with platform(tmp_path) as system:
        notice = system.post_notice()
        shown = [notice["_id"]]

        def delivery_shows_it() -> bool:
            return [n["_id"] for n in feed(system.delivery)["notices"]] == shown

        wait_until(
            delivery_shows_it, timeout=SETTLE_SECONDS, what="the notice on the delivery node"
        )

        def relay_shows_it() -> bool:
            return [n["_id"] for n in feed(system.relay)["notices"]] == shown

        wait_until(relay_shows_it, timeout=SETTLE_SECONDS, what="the notice on the relay")

        def all_operational() -> bool:
            found = components(feed(system.delivery))
            return len(found) == 5 and all(c["state"] == "operational" for c in found.values())

        wait_until(all_operational, timeout=SETTLE_SECONDS, what="every component operational")

        # The notice arrives through the change feed, so the delivery node's last probe of the
        # API may predate it; wait for a probe that follows it.
        def api_seen_after_the_notice() -> bool:
            api = components(feed(system.delivery))[("api", host(system.api))]
            return bool(api["lastSeen"] >= notice["creationDate"])

        wait_until(
            api_seen_after_the_notice, timeout=SETTLE_SECONDS, what="a probe after the notice"
        )
        api_seen = components(feed(system.delivery))[("api", host(system.api))]
        assert api_seen["detail"] == "edits and sign-ins work"

        system.take_control_plane_down()

        def control_plane_unreachable() -> bool:
            found = components(feed(system.delivery))
            return all(
                found[(kind, host(system.api))]["state"] == "unreachable"
                for kind in ("api", "database", "changeFeed")
            )

        wait_until(control_plane_unreachable, timeout=SETTLE_SECONDS, what="the API unreachable")

        def data_ageing() -> bool:
            age = feed(system.delivery)["delivery"]["dataAgeSeconds"]
            return age is not None and age > 2.0

        wait_until(data_ageing, timeout=SETTLE_SECONDS, what="the delivery node's data to age")

        document = feed(system.delivery)
        assert document["state"] == "degraded"
        assert [n["_id"] for n in document["notices"]] == shown
        api = components(document)[("api", host(system.api))]
        assert api["detail"] == "not answering (it was operational when last seen)"
        assert api["lastSeen"] >= api_seen["lastSeen"]
        page = loopback_get(f"{system.delivery.url}/status/page", timeout=5)
        assert page.status_code == 200
        assert "EU edits are read-only" in page.text
        assert "Unreachable" in page.text
        assert "Last seen" in page.text
        # the relay reads the notices from the delivery node, which still serves them
        assert relay_shows_it()
        relay_page = loopback_get(f"{system.relay.url}/status/page", timeout=5)
        assert relay_page.status_code == 200
        assert "EU edits are read-only" in relay_page.text

        # a restart during the outage: the notice and the last word on the API come from disk
        system.delivery.stop()
        system.delivery.start()

        def own_reading_taken() -> bool:
            # the node's first look at itself runs as it starts: a feed served before it ends
            # has no delivery part yet
            delivery = feed(system.delivery)["delivery"]
            return delivery is not None and delivery["dataAgeSeconds"] is not None

        wait_until(own_reading_taken, timeout=SETTLE_SECONDS, what="the node's own reading")
        restarted = feed(system.delivery)
        assert [n["_id"] for n in restarted["notices"]] == shown
        api_after = components(restarted)[("api", host(system.api))]
        assert (api_after["state"], api_after["lastSeen"]) == ("unreachable", api["lastSeen"])
        assert restarted["delivery"]["dataAgeSeconds"] > 2.0
