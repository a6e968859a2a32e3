"""JSON Patch (RFC 6902, including its appendix A examples), Merge Patch and the envelopes."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from flagstaff_server.domain import apply_json_patch, apply_merge_patch, parse_patch_body
from flagstaff_server.errors import InvalidInput, ValidationError, VersionConflict


@pytest.mark.parametrize(
    ("document", "patch", "expected"),
    [
        (
            {"foo": "bar"},
            [{"op": "add", "path": "/baz", "value": "qux"}],
            {"baz": "qux", "foo": "bar"},
        ),
        (
            {"foo": ["bar", "baz"]},
            [{"op": "add", "path": "/foo/1", "value": "qux"}],
            {"foo": ["bar", "qux", "baz"]},
        ),
        ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
        (
            {"foo": ["bar", "qux", "baz"]},
            [{"op": "remove", "path": "/foo/1"}],
            {"foo": ["bar", "baz"]},
        ),
        (
            {"baz": "qux", "foo": "bar"},
            [{"op": "replace", "path": "/baz", "value": "boo"}],
            {"baz": "boo", "foo": "bar"},
        ),
        (
            {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
            [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
            {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
        ),
        (
            {"foo": ["all", "grass", "cows", "eat"]},
            [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
            {"foo": ["all", "cows", "eat", "grass"]},
        ),
        (
            {"baz": "qux", "foo": ["a", 2, "c"]},
            [
                {"op": "test", "path": "/baz", "value": "qux"},
                {"op": "test", "path": "/foo/1", "value": 2},
            ],
            {"baz": "qux", "foo": ["a", 2, "c"]},
        ),
        (
            {"foo": "bar"},
            [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
            {"foo": "bar", "child": {"grandchild": {}}},
        ),
        (
            {"foo": ["bar"]},
            [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
            {"foo": ["bar", ["abc", "def"]]},
        ),
        ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
        ({"a/b": 1}, [{"op": "replace", "path": "/a~1b", "value": 2}], {"a/b": 2}),
        ({"a": [1]}, [{"op": "copy", "from": "/a", "path": "/b"}], {"a": [1], "b": [1]}),
        ({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}], {"b": 2}),
        ({"a": 1.0}, [{"op": "test", "path": "/a", "value": 1}], {"a": 1.0}),
    ],
)
def test_rfc6902_examples_apply(document: Any, patch: list[Any], expected: Any) -> None:
    assert apply_json_patch(document, patch) == expected


@pytest.mark.parametrize(
    ("document", "patch", "path"),
    [
        ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], "/baz"),
        ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}], "/baz/bat"),
        ({"foo": [1]}, [{"op": "add", "path": "/foo/2", "value": 0}], "/foo/2"),
        ({"foo": [1]}, [{"op": "add", "path": "/foo/01", "value": 0}], "/foo/01"),
        ({"foo": [1]}, [{"op": "remove", "path": "/foo/1"}], "/foo/1"),
        ({"foo": 1}, [{"op": "remove", "path": "/bar"}], "/bar"),
        ({"foo": 1}, [{"op": "replace", "path": "/bar", "value": 1}], "/bar"),
        ({"foo": {"a": 1}}, [{"op": "move", "from": "/foo", "path": "/foo/b"}], "/foo/b"),
        ({"foo": 1}, [{"op": "copy", "from": "/nope", "path": "/x"}], "/nope"),
        ({"foo": 1}, [{"op": "test", "path": "/foo", "value": True}], "/foo"),
        ({"foo": "x"}, [{"op": "add", "path": "/foo/bar", "value": 1}], "/foo/bar"),
    ],
)
def test_failing_operation_names_its_path(document: Any, patch: list[Any], path: str) -> None:
    with pytest.raises(ValidationError) as raised:
        apply_json_patch(document, patch)
    assert raised.value.path == path
    assert "patch operation 0" in raised.value.message


@pytest.mark.parametrize(
    ("operation", "path"),
    [
        ({"op": "frobnicate", "path": "/a"}, "/0/op"),
        ({"op": "add", "path": 3, "value": 1}, "/0/path"),
        ({"op": "add", "path": "a", "value": 1}, "/0/path"),
        ({"op": "add", "path": "/a~2", "value": 1}, "/0/path"),
        ({"op": "add", "path": "/a"}, "/0/value"),
        ({"op": "move", "path": "/a"}, "/0/from"),
        ("not an object", "/0"),
    ],
)
def test_malformed_operation_is_rejected(operation: Any, path: str) -> None:
    with pytest.raises(ValidationError) as raised:
        apply_json_patch({"a": 1}, [operation])
    assert raised.value.path == path


def test_failing_late_operation_leaves_input_untouched() -> None:
    document = {"a": [1, 2], "b": {"c": 1}}
    before = copy.deepcopy(document)
    patch = [
        {"op": "add", "path": "/a/-", "value": 3},
        {"op": "remove", "path": "/b/c"},
        {"op": "remove", "path": "/missing"},
    ]
    with pytest.raises(ValidationError) as raised:
        apply_json_patch(document, patch)
    assert "patch operation 2" in raised.value.message
    assert document == before


def test_added_values_are_copies_not_aliases() -> None:
    value = {"x": [1]}
    result = apply_json_patch({}, [{"op": "add", "path": "/v", "value": value}])
    result["v"]["x"].append(2)
    assert value == {"x": [1]}


@pytest.mark.parametrize("path", ["/_version", "/version"])
def test_version_test_mismatch_is_a_version_conflict(path: str) -> None:
    with pytest.raises(VersionConflict) as raised:
        apply_json_patch({"_version": 3, "version": 3}, [{"op": "test", "path": path, "value": 2}])
    assert raised.value.path == path


def test_version_test_match_passes() -> None:
    patch = [
        {"op": "test", "path": "/_version", "value": 3},
        {"op": "replace", "path": "/a", "value": 2},
    ]
    assert apply_json_patch({"_version": 3, "a": 1}, patch) == {"_version": 3, "a": 2}


def test_merge_patch_follows_rfc7386() -> None:
    document = {
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["a"],
    }
    merge = {"title": "Hello!", "author": {"familyName": None}, "tags": ["b"], "phone": "1"}
    assert apply_merge_patch(document, merge) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["b"],
        "phone": "1",
    }
    assert document["author"] == {"givenName": "John", "familyName": "Doe"}


def test_envelopes_are_parsed() -> None:
    bare = parse_patch_body([{"op": "remove", "path": "/a"}])
    assert (bare.kind, bare.comment, len(bare.operations)) == ("json", None, 1)
    wrapped = parse_patch_body({"comment": "why", "patch": [{"op": "remove", "path": "/a"}]})
    assert (wrapped.kind, wrapped.comment) == ("json", "why")
    merge = parse_patch_body({"comment": "m", "merge": {"a": 1}})
    assert (merge.kind, merge.merge, merge.comment) == ("merge", {"a": 1}, "m")


@pytest.mark.parametrize(
    ("body", "path", "error"),
    [
        ({"patch": {}}, "/patch", ValidationError),
        ({"merge": []}, "/merge", ValidationError),
        ({"comment": 1, "patch": []}, "/comment", ValidationError),
        ({"instructions": []}, "/instructions", InvalidInput),
        ({"something": 1}, "/", ValidationError),
        ("text", "/", InvalidInput),
        ({"patch": [1]}, "/patch/0", ValidationError),
    ],
)
def test_bad_envelopes_are_rejected(body: Any, path: str, error: type[Exception]) -> None:
    with pytest.raises(error) as raised:
        parse_patch_body(body)
    assert getattr(raised.value, "path", None) == path


@pytest.mark.parametrize(
    ("document", "patch", "expected"),
    [
        ({"a": [1, 2, 3]}, [{"op": "replace", "path": "/a/1", "value": 9}], {"a": [1, 9, 3]}),
        ({"a": [1, 2]}, [{"op": "add", "path": "/a/0", "value": 0}], {"a": [0, 1, 2]}),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/a/b"}], {"a": {"b": 1}}),
        ({"a": 1}, [{"op": "add", "path": "", "value": {"z": 0}}], {"z": 0}),
    ],
)
def test_more_operations_apply(document: Any, patch: list[Any], expected: Any) -> None:
    assert apply_json_patch(document, patch) == expected


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ([{"op": "remove", "path": ""}], ""),
        ([{"op": "replace", "path": "/a/x", "value": 1}], "/a/x"),
        ([{"op": "replace", "path": "/s/x", "value": 1}], "/s/x"),
        ([{"op": "remove", "path": "/s/x"}], "/s/x"),
        ([{"op": "replace", "path": "", "value": [1]}], ""),
        ([{"op": "test", "path": "/a/-", "value": 1}], "/a/-"),
    ],
)
def test_more_failures_name_their_path(patch: list[Any], path: str) -> None:
    with pytest.raises(ValidationError) as raised:
        apply_json_patch({"a": [1], "s": "text"}, patch)
    assert raised.value.path == path
