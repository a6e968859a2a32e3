"""Operator notices as values: the public JSON round-trips, what a node receives is checked
field by field (a JSON pointer for each refusal), and the page's order is gravest, then newest."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.errors import ValidationError
from flagstaff_server.notice import Notice, decode_notice, notice_json, ordered


def make(notice_id: str, severity: Any = "info", created: int = 1, **more: Any) -> Notice:
    title = f"t {notice_id}"
    return Notice(id=notice_id, title=title, severity=severity, created_ms=created, **more)


def test_the_public_form_round_trips() -> None:
    notice = make("n1", "critical", 5, message="m", regions=("a", "b"), expires_ms=9)
    assert decode_notice(notice_json(notice)) == notice
    signed = make("n2", source="signed")
    assert decode_notice(notice_json(signed)) == signed


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"_id": "has space"}, "/_id"),
        ({"title": ""}, "/title"),
        ({"title": 7}, "/title"),
        ({"message": "x" * 2001}, "/message"),
        ({"severity": "loud"}, "/severity"),
        ({"regions": ["ok", "Not-OK"]}, "/regions/1"),
        ({"creationDate": -1}, "/creationDate"),
        ({"creationDate": True}, "/creationDate"),
        ({"expiresAt": 1.5}, "/expiresAt"),
        ({"_source": "rumour"}, "/_source"),
        ({"message": "\x1b[31m"}, "/message"),
    ],
)
def test_a_received_notice_is_checked_field_by_field(change: dict[str, Any], path: str) -> None:
    body = {**notice_json(make("n1")), **change}
    with pytest.raises(ValidationError) as raised:
        decode_notice(body)
    assert raised.value.path == path


def test_a_notice_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValidationError) as raised:
        decode_notice(["n1"])
    assert raised.value.path == ""


def test_expiry_ends_a_notice_at_its_millisecond() -> None:
    notice = make("n1", expires_ms=100)
    assert notice.is_active(99)
    assert not notice.is_active(100)
    assert make("n2").is_active(10**12)


def test_the_gravest_come_first_then_the_newest() -> None:
    notices = [
        make("old-info", "info", 1),
        make("new-warning", "warning", 3),
        make("critical", "critical", 1),
        make("old-warning", "warning", 2),
    ]
    assert [n.id for n in ordered(notices)] == [
        "critical",
        "new-warning",
        "old-warning",
        "old-info",
    ]
