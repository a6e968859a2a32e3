"""`flagstaff killswitch keygen|sign|push` in-process: key files and their modes, documents a
node verifies, one-line errors with a non-zero exit for bad arguments and unreachable nodes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from flagstaff_server.break_glass.document import decode_document
from flagstaff_server.break_glass.signing import load_public_keys
from flagstaff_server.cli import main
from support.ports import free_port


def keygen(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["killswitch", "keygen", "-o", str(directory)]) == 0
    out = capsys.readouterr().out
    return out.split()[2]  # "key id <id>"


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_id = keygen(tmp_path / "keys", capsys)
    private = tmp_path / "keys" / "break-glass.key"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert list(load_public_keys([tmp_path / "keys" / "break-glass.pub"]).keys) == [key_id]
    before = private.read_bytes()
    assert main(["killswitch", "keygen", "-o", str(tmp_path / "keys")]) == 1
    assert "never overwrites" in capsys.readouterr().err
    assert private.read_bytes() == before


def test_sign_writes_a_document_the_public_key_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_id = keygen(tmp_path, capsys)
    output = tmp_path / "override.json"
    argv = ["killswitch", "sign", "--key", str(tmp_path / "break-glass.key")]
    argv += ["--project", "shop", "--environment", "production", "--flag", "checkout"]
    assert main([*argv, "--variation", "2", "--expires", "30m", "-o", str(output)]) == 0
    raw = json.loads(output.read_text())
    document = decode_document(raw)
    assert (document.key_id, document.action and document.action.variation) == (key_id, 2)
    assert document.expires_at is not None
    assert document.expires_at - document.issued_at == 30 * 60 * 1000
    load_public_keys([tmp_path / "break-glass.pub"]).verify(document)

    assert main([*argv, "--clear", "-o", str(output)]) == 0
    clear = decode_document(json.loads(output.read_text()))
    assert (clear.kind, clear.action) == ("flagOverrideClear", None)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--off", "--expires", "soon"], "--expires must be"),
        (["--clear", "--expires", "1h"], "--expires applies to overrides"),
        (["--off", "--flag", "bad key!"], "/flag"),
    ],
)
def test_sign_refuses_bad_arguments_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    keygen(tmp_path, capsys)
    argv = ["killswitch", "sign", "--key", str(tmp_path / "break-glass.key")]
    argv += ["--project", "shop", "--environment", "production", "--flag", "checkout"]
    assert main([*argv, *extra]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_sign_refuses_a_file_that_is_not_a_private_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keygen(tmp_path, capsys)
    argv = ["killswitch", "sign", "--key", str(tmp_path / "break-glass.pub"), "--off"]
    assert main([*argv, "--project", "p", "--environment", "e", "--flag", "f"]) == 1
    assert "not an unencrypted PEM private key" in capsys.readouterr().err


def test_push_to_an_unreachable_node_fails_with_a_non_zero_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keygen(tmp_path, capsys)
    output = tmp_path / "override.json"
    argv = ["killswitch", "sign", "--key", str(tmp_path / "break-glass.key"), "--off"]
    assert (
        main([*argv, "--project", "p", "--environment", "e", "--flag", "f", "-o", str(output)]) == 0
    )
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["killswitch", "push", "--to", url, "--timeout", "2", str(output)]) == 1
    err = capsys.readouterr().err
    assert f"{url}: unreachable" in err
    assert "1 of 1 nodes did not accept" in err
