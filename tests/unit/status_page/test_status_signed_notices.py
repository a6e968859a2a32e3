"""Notices signed with a break-glass key and pushed to a node: shown on its status page, kept
on disk before the answer (a restart shows them), forwarded to peers and handed to the audit
log; cleared by a signed clear (even one that arrives first); every refusal names its field and
changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from break_glass_support import Operator, now_ms
from flagstaff_server.break_glass.notice_document import unsigned_notice, unsigned_notice_clear
from flagstaff_server.break_glass.peers import PeerForwarder
from flagstaff_server.break_glass.state_file import AuditItem
from flagstaff_server.errors import Conflict, FlagstaffError, Forbidden, ValidationError
from flagstaff_server.status_page.notice_board import NoticeBoard
from flagstaff_server.status_page.signed_notices import FILE_NAME, SignedNotices
from support.deadlines import eventually


class Forwarder:
    """What the kill switch's forwarder was offered."""

    def __init__(self) -> None:
        self.offered: list[dict[str, Any]] = []

    def offer(self, document: dict[str, Any]) -> None:
        self.offered.append(document)


def notice(
    operator: Operator, title: str = "EU edits are read-only", **more: Any
) -> dict[str, Any]:
    fields: dict[str, Any] = {"issued_at": now_ms(), "severity": "warning", **more}
    return operator.signed(unsigned_notice(key_id=operator.key_id, title=title, **fields))


def clear(operator: Operator, notice_id: str) -> dict[str, Any]:
    document = unsigned_notice_clear(
        key_id=operator.key_id, notice_id=notice_id, issued_at=now_ms()
    )
    return operator.signed(document)


def body(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document)


@pytest.fixture
def operator(tmp_path: Path) -> Operator:
    return Operator.create(tmp_path / "keys")


def notices(tmp_path: Path, operator: Operator, **more: Any) -> tuple[SignedNotices, NoticeBoard]:
    board = NoticeBoard()
    signed = SignedNotices(
        board,
        keyring=operator.keyring(),
        directory=tmp_path / "status",
        **more,
    )
    return signed, board


async def test_a_signed_notice_is_shown_kept_and_forwarded(
    tmp_path: Path, operator: Operator
) -> None:
    forwarder = Forwarder()
    signed, board = notices(tmp_path, operator, forwarder=forwarder)
    await signed.start()
    document = notice(operator, regions=["eu"])
    answer = await signed.submit(body(document), clear=False)
    assert answer["notice"]["_id"] == document["id"]
    assert answer["notice"]["_source"] == "signed"
    assert [(n.id, n.regions, n.source) for n in board.active(now_ms())] == [
        (document["id"], ("eu",), "signed")
    ]
    assert forwarder.offered == [document]
    await signed.stop()
    # kept on disk before the answer: a restarted node shows it and forwards it again
    again, board_again = notices(tmp_path, operator, forwarder=Forwarder())
    await again.start()
    assert [n.id for n in board_again.active(now_ms())] == [document["id"]]
    with pytest.raises(Conflict) as replayed:
        await again.submit(body(document), clear=False)
    assert replayed.value.path == "/id"


async def test_a_signed_clear_ends_a_notice_and_one_that_came_first_refuses_it(
    tmp_path: Path, operator: Operator
) -> None:
    signed, board = notices(tmp_path, operator)
    await signed.start()
    first = notice(operator)
    await signed.submit(body(first), clear=False)
    answer = await signed.submit(body(clear(operator, first["id"])), clear=True)
    assert answer["cleared"] == first["id"]
    assert board.active(now_ms()) == []
    # peers forward in any order: a clear for a notice not seen yet is kept
    late = notice(operator, title="a notice whose clear came first")
    await signed.submit(body(clear(operator, late["id"])), clear=True)
    with pytest.raises(Conflict) as refused:
        await signed.submit(body(late), clear=False)
    assert refused.value.path == "/id"
    assert board.active(now_ms()) == []


async def test_an_expired_signed_notice_leaves_the_page(tmp_path: Path, operator: Operator) -> None:
    signed, board = notices(tmp_path, operator)
    await signed.start()
    soon = now_ms() + 300
    await signed.submit(body(notice(operator, expires_at=soon)), clear=False)
    assert len(board.active(now_ms())) == 1
    assert board.active(soon) == []


@pytest.mark.parametrize(
    ("change", "clear", "error", "path"),
    [
        ({"title": "changed after signing"}, False, Forbidden, "/signature"),
        ({"keyId": "0" * 16}, False, Forbidden, "/keyId"),
        ({"signature": "bm90IGEgc2lnbmF0dXJl"}, False, ValidationError, "/signature"),
        ({"colour": "red"}, False, ValidationError, "/colour"),
        ({"severity": "loud"}, False, ValidationError, "/severity"),
        ({}, True, ValidationError, "/kind"),
    ],
)
async def test_refusals_name_the_field_and_change_nothing(
    tmp_path: Path,
    operator: Operator,
    change: dict[str, Any],
    clear: bool,
    error: type[FlagstaffError],
    path: str,
) -> None:
    signed, board = notices(tmp_path, operator)
    await signed.start()
    document = {**notice(operator), **change}
    with pytest.raises(error) as refused:
        await signed.submit(body(document), clear=clear)
    assert refused.value.path == path
    assert board.active(now_ms()) == []
    assert not (tmp_path / "status" / FILE_NAME).exists()


async def test_expired_or_far_future_documents_are_refused(
    tmp_path: Path, operator: Operator
) -> None:
    signed, _ = notices(tmp_path, operator)
    await signed.start()
    issued = now_ms() - 10_000
    expired = notice(operator, issued_at=issued, expires_at=issued + 1000)
    with pytest.raises(ValidationError) as late:
        await signed.submit(body(expired), clear=False)
    assert late.value.path == "/expiresAt"
    ahead = notice(operator, issued_at=now_ms() + 3_600_000)
    with pytest.raises(ValidationError) as early:
        await signed.submit(body(ahead), clear=False)
    assert early.value.path == "/issuedAt"


async def test_accepted_documents_reach_the_audit_log_once_it_answers(
    tmp_path: Path, operator: Operator
) -> None:
    recorded: list[AuditItem] = []
    down = True

    def sink(item: AuditItem) -> None:
        if down:
            raise ConnectionError("database down")
        recorded.append(item)

    signed, _ = notices(tmp_path, operator, audit_sink=sink, accepted_by="delivery node 1")
    await signed.start()
    document = notice(operator)
    await signed.submit(body(document), clear=False)
    assert signed.listing()["auditWaiting"] == 1
    await signed.stop()
    # the waiting item survives a restart, and is recorded once the database answers
    down = False
    again, _ = notices(tmp_path, operator, audit_sink=sink, accepted_by="delivery node 1")
    await again.start()
    await eventually(lambda: again.listing()["auditWaiting"] == 0)
    assert [(i.document["id"], i.accepted_by) for i in recorded] == [
        (document["id"], "delivery node 1")
    ]
    await again.stop()


async def test_the_kill_switchs_forwarder_hands_notices_to_the_notices_endpoint(
    operator: Operator,
) -> None:
    sent: list[tuple[str, str]] = []

    def peer(request: httpx.Request) -> httpx.Response:
        sent.append((request.method, request.url.path))
        return httpx.Response(200, json={})

    forwarder = PeerForwarder(("http://peer:8030",), transport=httpx.MockTransport(peer))
    document = notice(operator)
    forwarder.offer(document)
    forwarder.offer(clear(operator, document["id"]))
    running = asyncio.create_task(forwarder.run())
    try:
        await eventually(lambda: len(sent) == 2)
    finally:
        running.cancel()
    assert sent == [("POST", "/break-glass/notices"), ("DELETE", "/break-glass/notices")]
