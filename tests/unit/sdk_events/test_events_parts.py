"""The processor's pure parts: summary counters, the context index LRU, context redaction and the
spools' bounds and order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flagstaff_core import Context
from flagstaff_core.attribute import escape_name
from flagstaff_sdk.events.context_index import ContextIndex
from flagstaff_sdk.events.redaction import ContextFormatter, without_anonymous
from flagstaff_sdk.events.spool import Batch, DiskSpool, MemorySpool
from flagstaff_sdk.events.summary import Summary
from hypothesis import given, settings
from hypothesis import strategies as st
from ldclient import Context as LdContext
from ldclient.impl.events.event_context_formatter import EventContextFormatter

# summary -----------------------------------------------------------------------------------------


def test_summary_counts_per_variation_and_version_and_marks_unknown_flags() -> None:
    summary = Summary()
    summary.count("f", ("user",), 0, 1, True, False, 2.0)
    summary.count("f", ("user",), 0, 1, True, False, 1.0)
    summary.count("f", ("org",), 1, 1, False, False, 3.0)
    summary.count("f", ("user",), 0, 2, True, False, 2.5)
    summary.count("f", ("org",), 0, 2, True, True, 2.75)  # the first default seen stays
    summary.count("gone", ("user",), None, None, "d", "d", 1.5)
    event = summary.to_event()
    assert event["startDate"] == 1000
    assert event["endDate"] == 3000
    f = event["features"]["f"]
    assert f["default"] is False
    assert f["contextKinds"] == ["org", "user"]
    assert sorted(f["counters"], key=lambda c: (c["variation"], c["version"])) == [
        {"count": 2, "value": True, "variation": 0, "version": 1},
        {"count": 2, "value": True, "variation": 0, "version": 2},
        {"count": 1, "value": False, "variation": 1, "version": 1},
    ]
    assert event["features"]["gone"]["counters"] == [{"count": 1, "value": "d", "unknown": True}]
    assert summary.evaluations() == 6


def test_summary_clear_starts_over() -> None:
    summary = Summary()
    summary.count("f", ("user",), 0, 1, True, None, 5.0)
    summary.clear()
    assert not summary
    assert summary.to_event() == {"kind": "summary", "startDate": 0, "endDate": 0, "features": {}}


# context index -----------------------------------------------------------------------------------


def test_context_index_forgets_the_least_recently_seen_key_first() -> None:
    index = ContextIndex(2)
    assert index.notice("a") is False
    assert index.notice("b") is False
    assert index.notice("a") is True  # a is now the most recent
    assert index.notice("c") is False  # evicts b
    assert index.notice("a") is True
    assert index.notice("b") is False
    assert len(index) == 2


def test_context_index_clear_forgets_everything() -> None:
    index = ContextIndex(10)
    index.notice("a")
    index.clear()
    assert index.notice("a") is False


# redaction ---------------------------------------------------------------------------------------

PERSON = Context(
    kind="user",
    key="u1",
    name="Ann",
    attributes={
        "email": "a@example.com",
        "address": {"street": "1 Main", "city": "Oslo", "geo": {"lat": 1, "lon": 2}},
        "/odd": 1,
    },
)


def test_global_private_attributes_are_removed_and_listed() -> None:
    formatter = ContextFormatter(private_attributes=("email", "/address/street", "name"))
    out = formatter.format(PERSON, redact_anonymous=False)
    assert out == {
        "key": "u1",
        "kind": "user",
        "address": {"city": "Oslo", "geo": {"lat": 1, "lon": 2}},
        "/odd": 1,
        "_meta": {"redactedAttributes": ["name", "email", "/address/street"]},
    }


def test_nested_references_reach_any_depth_and_escaped_names_are_literal() -> None:
    formatter = ContextFormatter(private_attributes=("/address/geo/lat", "/~1odd"))
    out = formatter.format(PERSON, redact_anonymous=False)
    assert out["address"] == {"street": "1 Main", "city": "Oslo", "geo": {"lon": 2}}
    assert "/odd" not in out
    assert sorted(out["_meta"]["redactedAttributes"]) == ["/address/geo/lat", "/~1odd"]


def test_a_reference_into_a_non_object_or_an_invalid_reference_removes_nothing() -> None:
    formatter = ContextFormatter(private_attributes=("/email/x", "/", "/address//city"))
    out = formatter.format(PERSON, redact_anonymous=False)
    assert out["email"] == "a@example.com"
    assert out["address"]["city"] == "Oslo"
    assert "_meta" not in out


def test_the_contexts_own_private_attributes_add_to_the_global_ones() -> None:
    context = Context(
        kind="user",
        key="u2",
        attributes={"email": "e", "phone": "p", "plan": "gold"},
        private_attributes=("phone",),
    )
    formatter = ContextFormatter(private_attributes=("email",))
    out = formatter.format(context, redact_anonymous=False)
    assert out == {
        "key": "u2",
        "kind": "user",
        "plan": "gold",
        "_meta": {"redactedAttributes": ["email", "phone"]},
    }
    # the formatter's own list is not changed by one context's list
    assert "phone" in ContextFormatter(private_attributes=("email",)).format(
        Context(kind="user", key="u3", attributes={"phone": "p"}), redact_anonymous=False
    )


def test_all_attributes_private_keeps_only_key_kind_and_anonymous() -> None:
    context = Context(kind="org", key="o1", name="Acme", anonymous=True, attributes={"tier": 3})
    out = ContextFormatter(all_private=True).format(context, redact_anonymous=False)
    assert out == {
        "key": "o1",
        "kind": "org",
        "anonymous": True,
        "_meta": {"redactedAttributes": ["name", "tier"]},
    }


def test_anonymous_contexts_are_redacted_only_where_asked() -> None:
    anonymous = Context(kind="user", key="anon", name="N", anonymous=True, attributes={"a": 1})
    formatter = ContextFormatter()
    assert formatter.format(anonymous, redact_anonymous=True) == {
        "key": "anon",
        "kind": "user",
        "anonymous": True,
        "_meta": {"redactedAttributes": ["name", "a"]},
    }
    assert formatter.format(anonymous, redact_anonymous=False) == {
        "key": "anon",
        "kind": "user",
        "anonymous": True,
        "name": "N",
        "a": 1,
    }
    # a named (not anonymous) context is untouched by anonymous redaction
    assert formatter.format(PERSON, redact_anonymous=True)["name"] == "Ann"


def test_multi_kind_contexts_are_formatted_per_kind_without_inner_kind() -> None:
    org = Context(kind="org", key="o1", attributes={"secret": 1, "tier": 2})
    anonymous = Context(kind="device", key="d1", anonymous=True, attributes={"os": "x"})
    multi = Context.multi(PERSON, org, anonymous)
    out = ContextFormatter(private_attributes=("secret",)).format(multi, redact_anonymous=True)
    assert out["kind"] == "multi"
    assert out["org"] == {"key": "o1", "tier": 2, "_meta": {"redactedAttributes": ["secret"]}}
    assert out["device"] == {
        "key": "d1",
        "anonymous": True,
        "_meta": {"redactedAttributes": ["os"]},
    }
    assert out["user"]["name"] == "Ann"


def test_without_anonymous_drops_anonymous_members() -> None:
    anonymous = Context(kind="device", key="d1", anonymous=True)
    org = Context.create("o1", "org")
    assert without_anonymous(anonymous) is None
    assert without_anonymous(org) is org
    kept = without_anonymous(Context.multi(org, anonymous))
    assert kept is not None
    assert kept.fully_qualified_key == org.fully_qualified_key
    assert (
        without_anonymous(Context.multi(anonymous, Context(kind="x", key="k", anonymous=True)))
        is None
    )


# spools ------------------------------------------------------------------------------------------


def _batch(n: int, size: int = 10) -> Batch:
    return Batch(f"00000000-0000-4000-8000-{n:012d}", b"x" * size, n)


def test_memory_spool_keeps_order_and_drops_oldest_beyond_its_bound() -> None:
    spool = MemorySpool(max_bytes=25)
    assert spool.add(_batch(1)) == []
    assert spool.add(_batch(2)) == []
    assert spool.add(_batch(3)) == [_batch(1)]
    assert spool.size == 20
    assert spool.head() == _batch(2)
    spool.remove_head()
    assert spool.head() == _batch(3)
    assert len(spool) == 1


def test_disk_spool_survives_a_restart_in_order_with_the_original_payload_ids(
    tmp_path: Path,
) -> None:
    spool = DiskSpool(tmp_path, max_bytes=1000)
    for n in (1, 2, 3):
        spool.add(_batch(n))
    spool.remove_head()
    (tmp_path / "unrelated.txt").write_text("not ours")
    reopened = DiskSpool(tmp_path, max_bytes=1000)
    assert len(reopened) == 2
    assert reopened.head() == _batch(2)
    reopened.add(_batch(4))
    reopened.remove_head()
    assert reopened.head() == _batch(3)
    reopened.remove_head()
    assert reopened.head() == _batch(4)
    assert (tmp_path / "unrelated.txt").exists()


def test_disk_spool_drops_oldest_files_beyond_its_bound(tmp_path: Path) -> None:
    spool = DiskSpool(tmp_path, max_bytes=30)
    dropped = [b for n in range(1, 6) for b in spool.add(_batch(n))]
    assert dropped == [_batch(1), _batch(2)]
    assert spool.size == 30
    assert len(list(tmp_path.glob("*.json"))) == 3
    assert DiskSpool(tmp_path, max_bytes=30).head() == _batch(3)


# redaction properties -----------------------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c", "/d", "e~f"])
_values = st.recursive(
    st.integers(0, 9) | st.text(max_size=3),
    lambda inner: st.dictionaries(_names, inner, max_size=3),
    max_leaves=8,
)


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for name, item in value.items():
            out.extend(_paths(item, (*prefix, name)))
    return out


def _reference(path: tuple[str, ...]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in path)


def _lookup(value: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return False, None
        value = value[name]
    return True, value


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_names, _values, min_size=1, max_size=4), st.data())
def test_a_private_path_never_reaches_the_event_and_is_listed_once(
    attributes: dict[str, Any], data: st.DataObject
) -> None:
    paths = _paths(attributes)
    private = data.draw(st.lists(st.sampled_from(paths), max_size=3, unique=True))
    context = Context(kind="user", key="k", attributes=attributes)
    out = ContextFormatter(private_attributes=[_reference(p) for p in private]).format(
        context, redact_anonymous=False
    )
    for path in private:
        assert _lookup(out, path) == (False, None)
    # a private path inside another private path is never reached, so it is not listed
    reachable = [p for p in private if not any(q != p and p[: len(q)] == q for q in private)]
    listed = out.get("_meta", {}).get("redactedAttributes", [])
    # top-level attributes are listed by name, as LaunchDarkly does; nested ones as referenced
    expected = [escape_name(p[0]) if len(p) == 1 else _reference(p) for p in reachable]
    assert sorted(listed) == sorted(expected)
    # everything not private is kept as it was
    for path in paths:
        if not any(path[: len(p)] == p for p in private):
            present, value = _lookup(out, path)
            assert present
            if not isinstance(value, dict):
                assert _lookup(attributes, path) == (True, value)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(_names, _values, min_size=1, max_size=4),
    st.data(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_redaction_agrees_with_the_official_sdk(
    attributes: dict[str, Any],
    data: st.DataObject,
    anonymous: bool,
    all_private: bool,
    redact_anonymous: bool,
) -> None:
    paths = _paths(attributes)
    global_private = [
        _reference(p) for p in data.draw(st.lists(st.sampled_from(paths), max_size=2))
    ]
    own_private = [_reference(p) for p in data.draw(st.lists(st.sampled_from(paths), max_size=2))]
    context = Context(
        kind="org",
        key="k",
        name="N",
        anonymous=anonymous,
        attributes=attributes,
        private_attributes=tuple(own_private),
    )
    ours = ContextFormatter(private_attributes=global_private, all_private=all_private).format(
        context, redact_anonymous=redact_anonymous
    )
    official = EventContextFormatter(all_private, global_private)
    ld_context = LdContext.from_dict(context.to_json())
    theirs = (
        official.format_context_redact_anonymous(ld_context)
        if redact_anonymous
        else official.format_context(ld_context)
    )
    for out in (ours, theirs):
        if "_meta" in out:
            out["_meta"]["redactedAttributes"].sort()
    assert ours == theirs
