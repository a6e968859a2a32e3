"""The chat message's pure parts: the summary of a change, where a resource is, the UI link and
Slack's escaping."""

from __future__ import annotations

from flagstaff_server.domain.chat_message import (
    MAX_LINES,
    escaped,
    place_of,
    summary_of,
    ui_link,
)


def flag(**environment: object) -> dict[str, object]:
    return {"name": "F", "tags": [], "environments": {"production": {"on": False, **environment}}}


def test_a_flag_change_is_summed_up_per_environment() -> None:
    before = flag(rules=[])
    after = {**flag(on=True, rules=[{"_id": "r"}]), "name": "G"}
    assert summary_of("flag", before, after) == (
        "name: 'F' → 'G'",
        "production: turned on",
        "production: rules: 0 → 1 item(s)",
    )


def test_creations_deletions_and_long_summaries() -> None:
    assert summary_of("flag", None, flag()) == ("created the flag",)
    assert summary_of("segment", {"key": "s"}, None) == ("deleted the segment",)
    before = {f"field{i}": i for i in range(MAX_LINES + 3)}
    after = {name: value + 1 for name, value in before.items()}
    lines = summary_of("environment", before, after)
    assert len(lines) == MAX_LINES + 1
    assert lines[-1] == "and 3 more change(s)"
    # version counters are not changes
    assert summary_of("segment", {"version": 1}, {"version": 2}) == ()


def test_places_and_links() -> None:
    assert place_of("proj/p:env/production:flag/k") == ("p", "production", "k")
    assert place_of("proj/p:env/*:flag/k") == ("p", None, "k")
    assert place_of("webhook/w1") == (None, None, None)
    assert (
        ui_link("https://x", "flag", "p", None, "k", "test") == "https://x/ui/#/p/p/e/test/flags/k"
    )
    assert (
        ui_link("https://x", "segment", "p", "e", "s", None) == "https://x/ui/#/p/p/e/e/segments/s"
    )
    assert (
        ui_link("https://x", "environment", "p", "e", None, None) == "https://x/ui/#/p/p/e/e/audit"
    )
    assert ui_link("https://x", "webhook", None, None, None, None) == "https://x/ui/"


def test_slack_markup_is_escaped() -> None:
    assert escaped("a <b> & c") == "a &lt;b&gt; &amp; c"
