"""`flagstaff killswitch sign-notice` and its push in-process: a notice (or its clear) the public
key verifies, one-line errors for bad arguments, and `push` handing it to a node's
`/break-glass/notices` (a real delivery node in a thread), whose status page then shows it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from flagstaff_server.break_glass.notice_document import decode_notice_document
from flagstaff_server.break_glass.signing import load_public_keys
from flagstaff_server.cli import main
from flagstaff_server.settings import Settings
from support.in_process import serve_flagstaff


def keygen(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["killswitch", "keygen", "-o", str(directory)]) == 0
    return capsys.readouterr().out.split()[2]  # "key id <id>"


def sign_notice(directory: Path, *extra: str) -> int:
    return main(["killswitch", "sign-notice", "--key", str(directory / "break-glass.key"), *extra])


def test_sign_notice_writes_a_notice_and_a_clear_the_public_key_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_id = keygen(tmp_path, capsys)
    output = tmp_path / "notice.json"
    assert (
        sign_notice(
            tmp_path,
            *("--title", "EU edits are read-only", "--message", "Use the kill switch."),
            *("--severity", "critical", "--region", "eu", "--expires", "2h"),
            *("-o", str(output)),
        )
        == 0
    )
    document = decode_notice_document(json.loads(output.read_text()))
    keyring = load_public_keys([tmp_path / "break-glass.pub"])
    keyring.verify(document)
    assert document.key_id == key_id
    assert document.notice is not None
    assert (document.notice.title, document.notice.severity, document.notice.regions) == (
        "EU edits are read-only",
        "critical",
        ("eu",),
    )
    assert document.notice.expires_ms == document.issued_at + 2 * 3_600_000
    assert sign_notice(tmp_path, "--clear", document.id, "-o", str(tmp_path / "clear.json")) == 0
    cleared = decode_notice_document(json.loads((tmp_path / "clear.json").read_text()))
    keyring.verify(cleared)
    assert (cleared.kind, cleared.clears) == ("statusNoticeClear", document.id)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--title", "   "], "/title"),
        (["--title", "t", "--region", "EU"], "/regions/0"),
        (["--title", "t", "--expires", "later"], "--expires must be"),
        (["--clear", "not-a-uuid"], "/notice"),
        (["--clear", "0" * 8 + "-0000-4000-8000-" + "0" * 12, "--region", "eu"], "--clear takes"),
    ],
)
def test_sign_notice_refuses_bad_arguments_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    keygen(tmp_path, capsys)
    assert sign_notice(tmp_path, *extra) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_push_hands_a_signed_notice_to_a_node_whose_page_then_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keygen(tmp_path / "keys", capsys)
    settings = Settings(
        data_dir=tmp_path / "node",
        role="all",
        seed_demo=False,
        break_glass_keys=(tmp_path / "keys" / "break-glass.pub",),
    )
    output = tmp_path / "notice.json"
    assert sign_notice(tmp_path / "keys", "--title", "Edits paused", "-o", str(output)) == 0
    notice_id = json.loads(output.read_text())["id"]
    with serve_flagstaff(settings) as served:
        assert main(["killswitch", "push", "--to", served.url, str(output)]) == 0
        assert f"{served.url}: accepted: notice {notice_id} shown" in capsys.readouterr().out
        feed = httpx.get(f"{served.url}/status/feed.json", timeout=10).json()
        assert [(n["_id"], n["_source"]) for n in feed["notices"]] == [(notice_id, "signed")]
        # pushed again: the node refuses the replay, and push says so with a non-zero exit
        assert main(["killswitch", "push", "--to", served.url, str(output)]) == 1
        assert "refused 409" in capsys.readouterr().err
        clear = tmp_path / "clear.json"
        assert sign_notice(tmp_path / "keys", "--clear", notice_id, "-o", str(clear)) == 0
        assert main(["killswitch", "push", "--to", served.url, str(clear)]) == 0
        feed = httpx.get(f"{served.url}/status/feed.json", timeout=10).json()
        assert feed["notices"] == []
