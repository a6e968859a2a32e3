"""Break-glass documents: strict decoding with the offending field named, the canonical bytes a
signature covers, and Ed25519 verification (tampered, foreign key, unknown key, bad encoding)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest
from break_glass_support import Operator
from flagstaff_server.break_glass.document import (
    OFF,
    Action,
    canonical_bytes,
    decode_document,
    parse_document,
)
from flagstaff_server.break_glass.signing import KeyFileError, load_public_keys
from flagstaff_server.errors import FlagstaffError, Forbidden, MalformedJson, ValidationError


@pytest.fixture
def operator(tmp_path: Path) -> Operator:
    return Operator.create(tmp_path / "keys")


def refusal(raw: Any) -> FlagstaffError:
    with pytest.raises(FlagstaffError) as caught:
        decode_document(raw)
    return caught.value


def test_canonical_bytes_sort_members_drop_the_signature_and_hold_no_whitespace() -> None:
    document = {"kind": "flagOverride", "flag": "a", "action": {"off": True}, "signature": "x"}
    assert canonical_bytes(document) == b'{"action":{"off":true},"flag":"a","kind":"flagOverride"}'
    reordered = {"signature": "y", "action": {"off": True}, "kind": "flagOverride", "flag": "a"}
    assert canonical_bytes(reordered) == canonical_bytes(document)


def test_a_signed_override_decodes_and_verifies(operator: Operator) -> None:
    raw = operator.override("banner", Action(on=True, variation=2), expires_at=None)
    document = decode_document(raw)
    assert document.flag_id == ("default", "production", "banner")
    assert document.action == Action(on=True, variation=2)
    assert document.expires_at is None
    operator.keyring().verify(document)  # no exception


def test_a_pretty_printed_file_verifies_like_the_compact_one(operator: Operator) -> None:
    raw = operator.override("banner")
    pretty = orjson.dumps(raw, option=orjson.OPT_INDENT_2)
    operator.keyring().verify(parse_document(pretty))


@pytest.mark.parametrize(
    ("change", "value"),
    [("flag", "other"), ("action", {"on": True}), ("expiresAt", 9_999_999_999_999)],
)
def test_a_document_changed_after_signing_is_refused_naming_the_signature(
    operator: Operator, change: str, value: Any
) -> None:
    raw = {**operator.override("banner"), change: value}
    with pytest.raises(Forbidden) as caught:
        operator.keyring().verify(decode_document(raw))
    assert caught.value.path == "/signature"


def test_a_document_signed_by_another_key_claiming_ours_is_refused(
    operator: Operator, tmp_path: Path
) -> None:
    intruder = Operator.create(tmp_path / "intruder")
    forged = intruder.signed({**intruder.override("banner"), "keyId": operator.key_id})
    with pytest.raises(Forbidden) as caught:
        operator.keyring().verify(decode_document(forged))
    assert caught.value.path == "/signature"


def test_an_unknown_key_is_refused_naming_the_key_id(operator: Operator, tmp_path: Path) -> None:
    stranger = Operator.create(tmp_path / "stranger")
    with pytest.raises(Forbidden) as caught:
        operator.keyring().verify(decode_document(stranger.override("banner")))
    assert caught.value.path == "/keyId"
    assert stranger.key_id in caught.value.message


def test_a_signature_that_is_not_64_bytes_of_base64_is_malformed(operator: Operator) -> None:
    for signature in ("not base64!", base64.b64encode(b"short").decode()):
        raw = {**operator.override("banner"), "signature": signature}
        with pytest.raises(ValidationError) as caught:
            operator.keyring().verify(decode_document(raw))
        assert caught.value.path == "/signature"


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        ({"kind": "flagTweak"}, "/kind"),
        ({"extra": 1}, "/extra"),
        ({"id": "not-a-uuid"}, "/id"),
        ({"id": "6F9619FF-8B86-D011-B42D-00C04FC964FF"}, "/id"),
        ({"keyId": "xyz"}, "/keyId"),
        ({"project": "has space"}, "/project"),
        ({"environment": ""}, "/environment"),
        ({"flag": 7}, "/flag"),
        ({"issuedAt": "yesterday"}, "/issuedAt"),
        ({"issuedAt": True}, "/issuedAt"),
        ({"issuedAt": 1.5}, "/issuedAt"),
        ({"expiresAt": 1}, "/expiresAt"),
        ({"action": {"off": False}}, "/action/off"),
        ({"action": {"off": True, "on": True}}, "/action"),
        ({"action": {"variation": -1}}, "/action/variation"),
        ({"action": {"variation": "1"}}, "/action/variation"),
        ({"action": {"explode": True}}, "/action/explode"),
        ({"action": "off"}, "/action"),
        ({"signature": ""}, "/signature"),
    ],
)
def test_a_malformed_override_is_refused_naming_the_field(
    operator: Operator, edit: dict[str, Any], path: str
) -> None:
    error = refusal({**operator.override("banner"), **edit})
    assert isinstance(error, ValidationError)
    assert error.path == path


@pytest.mark.parametrize("missing", ["id", "keyId", "flag", "issuedAt", "action", "signature"])
def test_a_missing_member_is_named(operator: Operator, missing: str) -> None:
    raw = {k: v for k, v in operator.override("banner").items() if k != missing}
    assert refusal(raw).path == f"/{missing}"


def test_a_clear_carries_no_action_or_expiry(operator: Operator) -> None:
    clear = operator.clear("banner")
    assert decode_document(clear).action is None
    assert refusal({**clear, "action": {"off": True}}).path == "/action"
    assert refusal({**clear, "expiresAt": None}).path == "/expiresAt"


def test_bodies_that_are_not_a_json_object_are_refused() -> None:
    with pytest.raises(MalformedJson):
        parse_document(b"{not json")
    with pytest.raises(ValidationError) as caught:
        parse_document(b"[1, 2]")
    assert caught.value.path == ""
    with pytest.raises(ValidationError):
        parse_document(b" " * 20_000)


def test_key_files_that_hold_no_ed25519_public_key_are_refused(
    operator: Operator, tmp_path: Path
) -> None:
    with pytest.raises(KeyFileError, match="holds no PEM public key"):
        load_public_keys([operator.private_path])
    with pytest.raises(KeyFileError, match="cannot read"):
        load_public_keys([tmp_path / "missing.pub"])


def test_one_file_may_hold_several_public_keys(operator: Operator, tmp_path: Path) -> None:
    second = Operator.create(tmp_path / "second")
    both = tmp_path / "both.pub"
    both.write_bytes(operator.public_path.read_bytes() + second.public_path.read_bytes())
    keyring = load_public_keys([both])
    assert set(keyring.keys) == {operator.key_id, second.key_id}
    keyring.verify(decode_document(second.override("banner", OFF)))
