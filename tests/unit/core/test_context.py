"""Contexts: validation, the old user format, fully-qualified keys, attribute references."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import Context, ContextError, decode_context, secure_mode_hash
from flagstaff_core.attribute import escape_name, parse_attribute, parse_reference
from ldclient import Context as SdkContext
from ldclient.client import _secure_mode_hash  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        {"kind": "user"},
        {"kind": "user", "key": ""},
        {"kind": "user", "key": 5},
        {"kind": "", "key": "k"},
        {"kind": "kind", "key": "k"},
        {"kind": "has space", "key": "k"},
        {"kind": "ünicode", "key": "k"},
        {"kind": 3, "key": "k"},
        {"kind": "user", "key": "k", "name": 1},
        {"kind": "user", "key": "k", "anonymous": "yes"},
        {"kind": "user", "key": "k", "_meta": {"privateAttributes": "email"}},
        {"kind": "user", "key": "k", "": 1},
        {"kind": "multi"},
        {"kind": "multi", "user": "u1"},
        {"kind": "multi", "user": {"key": ""}},
        {"kind": "multi", "user": {"key": "u"}, "kind2": {"key": ""}},
        {"key": 5},
        {"key": "k", "email": 3},
        {"key": "k", "custom": []},
        {"key": "k", "privateAttributeNames": [1]},
    ],
)
def test_invalid_contexts_are_rejected(obj: Any) -> None:
    with pytest.raises(ContextError):
        decode_context(obj)


def test_single_kind_context_reads_built_ins_and_custom_attributes() -> None:
    context = decode_context(
        {"kind": "org", "key": "acme", "name": "Acme", "plan": "gold", "gone": None,
         "_meta": {"privateAttributes": ["/address/street"]}}
    )  # fmt: skip
    assert (context.kind, context.key, context.kinds) == ("org", "acme", ("org",))
    assert context.get("name") == "Acme"
    assert context.get("plan") == "gold"
    assert context.get("gone") is None
    assert context.get("anonymous") is False
    assert context.private_attributes == ("/address/street",)
    assert context.to_json() == {
        "kind": "org", "key": "acme", "name": "Acme", "plan": "gold",
        "_meta": {"privateAttributes": ["/address/street"]},
    }  # fmt: skip


def test_multi_kind_context_sorts_kinds_and_collapses_a_single_kind() -> None:
    context = decode_context({"kind": "multi", "user": {"key": "u1"}, "org": {"key": "o:1"}})
    assert context.kinds == ("org", "user")
    assert context.multiple
    assert context.key == ""
    assert context.individual("user") == Context.create("u1")
    single = decode_context({"kind": "multi", "org": {"key": "o1", "name": "O"}})
    assert not single.multiple
    assert single.kind == "org"
    assert single.name == "O"
    assert Context.multi(context, Context.create("d", "device")).kinds == ("device", "org", "user")


def test_duplicate_kinds_are_rejected() -> None:
    with pytest.raises(ContextError):
        Context.multi(Context.create("a"), Context.create("b"))


def test_old_user_format_becomes_a_user_context() -> None:
    context = decode_context(
        {"key": "u1", "secondary": "s", "email": "e@x", "name": "N", "anonymous": True,
         "custom": {"plan": "gold", "email": "custom@x", "nothing": None},
         "privateAttributeNames": ["email", "/slashed"]}
    )  # fmt: skip
    assert (context.kind, context.key, context.name, context.anonymous) == ("user", "u1", "N", True)
    assert context.get("email") == "e@x"
    assert context.get("plan") == "gold"
    assert context.get("secondary") is None
    assert context.get("nothing") is None
    assert context.private_attributes == ("email", "/~1slashed")
    assert decode_context({"key": ""}).key == ""  # old users could have empty keys


@pytest.mark.parametrize(
    "obj",
    [
        {"kind": "user", "key": "u1"},
        {"kind": "org", "key": "acme"},
        {"kind": "org", "key": "a:b%c"},
        {"kind": "multi", "user": {"key": "u:1"}, "org": {"key": "o%1"}, "device": {"key": "d"}},
    ],
)
def test_fully_qualified_key_and_secure_mode_hash_match_the_official_sdk(
    obj: dict[str, Any],
) -> None:
    ours = decode_context(obj)
    theirs = SdkContext.from_dict(obj)
    assert ours.fully_qualified_key == theirs.fully_qualified_key

    class _Config:
        sdk_key = "sdk-secret"

    assert secure_mode_hash("sdk-secret", ours) == _secure_mode_hash(_Config(), theirs)


@pytest.mark.parametrize(
    ("text", "components"),
    [
        ("name", ("name",)),
        ("/name", ("name",)),
        ("/address/street", ("address", "street")),
        ("/a~1b", ("a/b",)),
        ("/a~0b", ("a~b",)),
        ("/~01", ("~1",)),
        ("", None),
        ("/", None),
        ("//", None),
        ("/a/", None),
        ("/a~b", None),
        ("/a~", None),
    ],
)
def test_attribute_references_parse_like_launchdarkly(
    text: str, components: tuple[str, ...] | None
) -> None:
    assert parse_reference(text) == components


def test_attribute_without_context_kind_is_a_literal_name() -> None:
    assert parse_attribute("/a/b", None) == ("/a/b",)
    assert parse_attribute("/a/b", "user") == ("a", "b")
    assert parse_attribute("", None) is None
    assert escape_name("/a~b") == "/~1a~0b"
    assert parse_reference(escape_name("/a~b")) == ("/a~b",)
