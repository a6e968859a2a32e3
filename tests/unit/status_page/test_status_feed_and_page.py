"""The status feed's shape (regions with this node's first, one overall state, the fleet as the
ingestion nodes report it, notices gravest first) and the page rendered from it: headings for
each section, every state in words, nothing a notice says is taken as markup, no script and no
resource from elsewhere, a style sheet the CSP allows by its hash."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from typing import Any

from flagstaff_server.notice import Notice
from flagstaff_server.status_page.components import SELF, Reading
from flagstaff_server.status_page.feed import NodeInfo, build_feed
from flagstaff_server.status_page.page_html import CONTENT_SECURITY_POLICY, STYLE, render
from status_bodies import api_body, delivery_body, ingest_body

NOW = 1_800_000_000_000
NODE = NodeInfo(role="delivery", region="b", version="1.2.3")
FLEET = {
    "asOf": NOW - 5_000,
    "error": None,
    "running": 12,
    "stale": 2,
    "stopped": 3,
    "worstDataAgeMs": 420_000,
    "truncated": False,
    "environments": [],
}


def readings() -> list[Reading]:
    return [
        Reading(source=SELF, body=delivery_body(region="b"), last_seen_ms=NOW, checked_ms=NOW),
        Reading(
            source="http://api-a:8030/status",
            body=api_body(region="a"),
            last_seen_ms=NOW - 180_000,
            checked_ms=NOW,
            error="connection refused or unreachable",
        ),
        Reading(
            source="http://ingest-b:8030/status",
            body=ingest_body(region="b", fleet=FLEET),
            last_seen_ms=NOW,
            checked_ms=NOW,
        ),
    ]


NOTICES = [
    Notice(
        id="n1",
        title="EU edits are <b>read-only</b>",
        message="Use the kill switch for emergencies.\n<script>alert(1)</script>",
        severity="critical",
        regions=("a",),
        created_ms=NOW - 60_000,
    ),
    Notice(id="n2", title="Maintenance tonight", created_ms=NOW - 30_000),
]


def feed() -> dict[str, Any]:
    return build_feed(node=NODE, readings=readings(), notices=NOTICES, now_ms=NOW)


def test_the_feed_lists_components_by_region_with_this_nodes_region_first() -> None:
    document = feed()
    assert document["format"] == 1
    assert document["generatedAt"] == NOW
    assert document["node"] == {"role": "delivery", "region": "b", "version": "1.2.3"}
    assert [region["name"] for region in document["regions"]] == ["b", "a"]
    region_b, region_a = document["regions"]
    assert [(c["component"], c["node"], c["state"]) for c in region_b["components"]] == [
        ("delivery", "this node", "operational"),
        ("ingest", "ingest-b:8030", "operational"),
    ]
    assert region_b["state"] == "operational"
    assert [(c["component"], c["state"], c["lastSeen"]) for c in region_a["components"]] == [
        ("api", "unreachable", NOW - 180_000),
        ("database", "unreachable", NOW - 180_000),
        ("changeFeed", "unreachable", NOW - 180_000),
    ]
    assert region_a["state"] == "degraded"
    assert document["state"] == "degraded"
    assert document["summary"] == "3 of 5 components need attention."
    assert document["delivery"]["state"] == "operational"
    assert document["delivery"]["dataAgeSeconds"] == 0.4


def test_the_feed_carries_the_fleet_as_ingestion_reports_it_and_the_notices() -> None:
    document = feed()
    assert document["fleet"] == [
        {
            "region": "b",
            "node": "ingest-b:8030",
            "reachable": True,
            "lastSeen": NOW,
            "asOf": NOW - 5_000,
            "running": 12,
            "stale": 2,
            "stopped": 3,
            "worstDataAgeMs": 420_000,
        }
    ]
    assert [notice["_id"] for notice in document["notices"]] == ["n1", "n2"]
    assert document["notices"][0]["title"] == "EU edits are <b>read-only</b>"


def test_a_fleet_figure_a_peer_sends_malformed_reads_as_unknown() -> None:
    bad = {**FLEET, "running": "12", "stale": True, "asOf": 1.5}
    body = ingest_body(fleet=bad)
    document = build_feed(
        node=NODE,
        readings=[Reading(source=SELF, body=body, last_seen_ms=NOW, checked_ms=NOW)],
        notices=[],
        now_ms=NOW,
    )
    row = document["fleet"][0]
    assert (row["running"], row["stale"], row["asOf"]) == (None, None, None)
    assert "unknown" in render(document).decode()


def test_everything_operational_says_so() -> None:
    document = build_feed(
        node=NODE,
        readings=[Reading(source=SELF, body=delivery_body(), last_seen_ms=NOW, checked_ms=NOW)],
        notices=[],
        now_ms=NOW,
    )
    assert (document["state"], document["summary"]) == (
        "operational",
        "All 1 components are operational.",
    )
    assert "No notices from the operators." in render(document).decode()


class Outline(HTMLParser):
    """Headings, table header cells, tags and attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.headings: list[tuple[str, str]] = []
        self._heading: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs
        if re.fullmatch(r"h[1-6]", tag):
            self._heading, self._text = tag, []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._heading:
            self.headings.append((tag, " ".join("".join(self._text).split())))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._text.append(data)


def test_the_page_has_one_h1_a_heading_per_section_and_region_and_states_in_words() -> None:
    page = render(feed()).decode()
    outline = Outline()
    outline.feed(page)
    assert outline.headings == [
        ("h1", "Flagstaff status"),
        ("h2", "Notices"),
        ("h3", "Critical EU edits are <b>read-only</b>"),
        ("h3", "Info Maintenance tonight"),
        ("h2", "Region b ✓ Operational"),
        ("h2", "Region a ▲ Degraded"),
        ("h2", "SDK fleet"),
    ]
    assert '<html lang="en">' in page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert page.count('<th scope="col">') == 4 + 4 + 7
    # the symbols are decoration: every state is also said in words
    for word in ("Operational", "Unreachable", "Degraded"):
        assert '<span aria-hidden="true">' in page
        assert f"</span> {word}</span>" in page
    assert "Last seen <time" in page
    assert "(3 min ago)" in page
    assert "Regions: a" in page
    assert "All regions" in page


def test_nothing_a_notice_says_becomes_markup_and_nothing_loads_from_elsewhere() -> None:
    page = render(feed()).decode()
    outline = Outline()
    outline.feed(page)
    assert "script" not in outline.tags
    assert "b" not in outline.tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not [value for name, value in outline.attributes if name in ("src", "srcset")]
    assert not [v for name, v in outline.attributes if name == "href" and v != "/status/feed.json"]
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in CONTENT_SECURITY_POLICY
    assert f"<style>{STYLE}</style>" in page
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
