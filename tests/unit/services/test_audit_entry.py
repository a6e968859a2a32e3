"""An audit entry's representation: each stored value once, and the sentences about it short even
for entries written before names and comments were bounded."""

from __future__ import annotations

from datetime import UTC, datetime

from flagstaff_server.services.audit import represent
from flagstaff_server.services.ports import AuditEntry


def test_sentences_abridge_a_huge_name_and_comment_and_documents_appear_once() -> None:
    name, comment = "n" * 1_000_000, "c" * 1_000_000
    entry = AuditEntry(
        id="e1",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        actor="t1",
        kind="flag",
        resource="proj/p:env/*:flag/f",
        action="updateFlag",
        comment=comment,
        patch=[{"op": "replace", "path": "/name", "value": name}],
        before={"key": "f", "name": "old"},
        after={"key": "f", "name": name},
    )
    shown = represent(entry, {"t1": "bot"}, {})
    assert shown["name"] == name
    assert shown["comment"] == comment
    for sentence in (shown["description"], shown["title"], shown["shortDescription"]):
        assert len(sentence) < 1_000
    assert len(shown["target"]["name"]) <= 256
    assert shown["description"].startswith("bot updated the flag " + "n" * 100)
    assert "previousVersion" not in shown
    assert "currentVersion" not in shown
    assert shown["delta"]["after"]["name"] == name
