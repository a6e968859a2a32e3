"""Reading a client's context: base64url in either padding and alphabet, JSON and context errors
named, fingerprints that ignore key order, and the secure-mode check against the official SDK."""

from __future__ import annotations

import base64
import json

import pytest
from flagstaff_core import Context, secure_mode_hash
from flagstaff_server.delivery.client_context import (
    SECURE_MODE_MESSAGE,
    check_secure_mode,
    decode_base64_json,
    read_context,
)
from flagstaff_server.errors import InvalidInput
from ldclient import Context as LDContext
from ldclient.client import LDClient
from ldclient.config import Config

CONTEXT = {"kind": "user", "key": "ü-user/+?", "name": "Zoë"}
RAW = json.dumps(CONTEXT).encode()


@pytest.mark.parametrize(
    "encoded",
    [
        base64.urlsafe_b64encode(RAW).decode(),
        base64.urlsafe_b64encode(RAW).decode().rstrip("="),
        base64.b64encode(RAW).decode().replace("/", "_").replace("+", "-").rstrip("="),
    ],
    ids=["padded", "unpadded", "standard-alphabet-translated"],
)
def test_base64url_context_decodes_padded_or_not(encoded: str) -> None:
    assert decode_base64_json(encoded) == CONTEXT


def test_padding_is_really_exercised() -> None:
    assert len(RAW) % 3 != 0


@pytest.mark.parametrize(
    ("segment", "words"),
    [
        ("!!!!", "base64url"),
        ("a", "base64url"),
        (base64.urlsafe_b64encode(b"{not json").decode(), "JSON"),
        (base64.urlsafe_b64encode(b"\xff\xfe").decode(), "JSON"),
    ],
)
def test_bad_segments_are_invalid_input_naming_the_context(segment: str, words: str) -> None:
    with pytest.raises(InvalidInput, match=words) as raised:
        decode_base64_json(segment)
    assert raised.value.path == "context"


@pytest.mark.parametrize(
    "obj",
    [[], "user", None, {"kind": "user"}, {"kind": "user", "key": 5}, {"kind": "multi"}],
)
def test_invalid_contexts_are_rejected(obj: object) -> None:
    with pytest.raises(InvalidInput) as raised:
        read_context(obj)
    assert raised.value.path == "context"


def test_old_user_format_is_a_user_context() -> None:
    client = read_context({"key": "old", "custom": {"plan": "pro"}})
    assert client.context.kind == "user"
    assert client.context.key == "old"


def test_fingerprint_ignores_key_order_but_not_values() -> None:
    one = read_context({"kind": "user", "key": "a", "plan": "pro"})
    same = read_context({"plan": "pro", "key": "a", "kind": "user"})
    other = read_context({"kind": "user", "key": "a", "plan": "free"})
    assert one.fingerprint == same.fingerprint
    assert one.fingerprint != other.fingerprint


@pytest.mark.parametrize(
    "context",
    [
        {"kind": "user", "key": "user-1"},
        {"kind": "org", "key": "acme"},
        {"kind": "multi", "user": {"key": "u"}, "org": {"key": "o:1"}},
    ],
)
def test_secure_mode_accepts_the_official_sdk_hash_only(context: dict[str, object]) -> None:
    sdk_key = "sdk-secret-123"
    official = LDClient(config=Config(sdk_key, offline=True))
    try:
        right = official.secure_mode_hash(LDContext.from_dict(context))
    finally:
        official.close()
    decoded = read_context(context).context
    check_secure_mode(sdk_key, decoded, right)
    check_secure_mode(sdk_key, decoded, right.upper())
    for wrong in (None, "", right[:-2], "é" + right[1:]):
        with pytest.raises(InvalidInput, match=SECURE_MODE_MESSAGE):
            check_secure_mode(sdk_key, decoded, wrong)
    with pytest.raises(InvalidInput):
        check_secure_mode("another-key", decoded, right)


def test_secure_mode_hash_is_per_context() -> None:
    hash_of_a = secure_mode_hash("k", Context.create("a"))
    with pytest.raises(InvalidInput):
        check_secure_mode("k", Context.create("b"), hash_of_a)
