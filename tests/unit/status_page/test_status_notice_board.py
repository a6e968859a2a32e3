"""The notices a node holds: feed changes add and delete them, an upstream's list replaces the
previous one, the page shows each id once and never an expired one, and the file written from
it restores it (an unreadable file or entry is skipped, never fatal)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from flagstaff_server.notice import Notice, notice_json
from flagstaff_server.services.ports import Change
from flagstaff_server.status_page.notice_board import FILE_NAME, LIMIT, NoticeBoard, write_file


def notice(notice_id: str, **more: object) -> Notice:
    return Notice(id=notice_id, title=f"title {notice_id}", created_ms=10, **more)  # type: ignore[arg-type]


def feed_change(seq: int, notice_id: str, item: dict[str, object] | None) -> Change:
    return Change(
        seq=seq,
        project="",
        environment="",
        kind="notice",
        key=notice_id,
        version=1 if item is not None else 2,
        item=item,
        at=datetime.now(UTC),
    )


def test_feed_changes_add_and_delete_notices() -> None:
    board = NoticeBoard()
    assert board.apply_change(feed_change(1, "a", notice_json(notice("a"))))
    assert board.apply_change(feed_change(2, "b", notice_json(notice("b", severity="critical"))))
    assert [n.id for n in board.active(0)] == ["b", "a"]
    assert board.apply_change(feed_change(3, "a", None))
    assert [n.id for n in board.active(0)] == ["b"]


def test_a_malformed_feed_notice_is_dropped_and_said_so() -> None:
    board = NoticeBoard()
    assert not board.apply_change(feed_change(1, "a", {"_id": "a", "title": ""}))
    assert board.active(0) == []


def test_expired_notices_are_not_shown_and_each_id_shows_once() -> None:
    board = NoticeBoard()
    board.put("feed", notice("a"))
    board.put("upstream", notice("a"))
    board.put("signed", notice("s", expires_ms=100))
    assert [n.id for n in board.active(99)] == ["a", "s"]
    assert [n.id for n in board.active(100)] == ["a"]


def test_an_upstream_list_replaces_the_previous_one_and_moves_the_revision_only_on_change() -> None:
    board = NoticeBoard()
    board.replace("upstream", [notice("a"), notice("b")])
    revision = board.revision
    board.replace("upstream", [notice("a"), notice("b")])
    assert board.revision == revision
    board.replace("upstream", [notice("b")])
    assert board.revision == revision + 1
    assert [n.id for n in board.active(0)] == ["b"]


def test_the_file_restores_the_feeds_and_upstreams_notices(tmp_path: Path) -> None:
    board = NoticeBoard()
    board.put("feed", notice("a", regions=("eu",)))
    board.put("upstream", notice("u", expires_ms=99))
    board.put("signed", notice("s", source="signed"))  # kept with its document elsewhere
    write_file(tmp_path, board.encode())
    restored = NoticeBoard()
    restored.load(tmp_path)
    assert restored.held == {**board.held, "signed": {}}


def test_an_unreadable_file_or_entry_is_skipped(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text("{not json")
    board = NoticeBoard()
    board.load(tmp_path)
    assert board.active(0) == []
    (tmp_path / FILE_NAME).write_text(
        '{"format": 1, "feed": [{"_id": "ok", "title": "t", "creationDate": 1}, {"_id": ""}],'
        ' "signed": "x"}'
    )
    board.load(tmp_path)
    assert [n.id for n in board.active(0)] == ["ok"]


def test_the_board_keeps_the_newest_notices_up_to_its_limit() -> None:
    board = NoticeBoard()
    for index in range(LIMIT + 5):
        board.put("signed", Notice(id=f"n{index}", title="t", created_ms=index))
    kept = board.held["signed"]
    assert len(kept) == LIMIT
    assert "n0" not in kept
    assert f"n{LIMIT + 4}" in kept
