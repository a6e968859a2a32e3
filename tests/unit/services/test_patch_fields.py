"""`patch_fields`: the PATCH of a project or environment representation, checked field by field."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.errors import ValidationError
from flagstaff_server.services.field import check_name, check_tags, patch_fields

EDITABLE = {"name": check_name, "tags": check_tags}


def patch(body: Any, *, required: tuple[str, ...] = ("name",)) -> Any:
    before = {"_id": "1", "key": "k", "name": "Old", "tags": ["a"]}
    return patch_fields(
        before, body, editable=EDITABLE, read_only=("_id", "key"), required=required, noun="thing"
    )


def test_json_patch_yields_checked_values_comment_and_operations() -> None:
    operations = [{"op": "replace", "path": "/name", "value": "New"}]
    result = patch({"comment": "why", "patch": operations})
    assert result.values == {"name": "New", "tags": ["a"]}
    assert result.comment == "why"
    assert result.patch == operations


def test_merge_patch_is_recorded_under_merge() -> None:
    result = patch({"merge": {"tags": ["b"]}})
    assert result.values["tags"] == ["b"]
    assert result.patch == {"merge": {"tags": ["b"]}}


def test_changing_a_read_only_field_names_it() -> None:
    with pytest.raises(ValidationError, match="key is read-only") as caught:
        patch([{"op": "replace", "path": "/key", "value": "other"}])
    assert caught.value.path == "/key"


def test_unknown_field_is_named_with_the_noun() -> None:
    with pytest.raises(ValidationError, match="unknown thing field 'color'") as caught:
        patch([{"op": "add", "path": "/color", "value": "fff"}])
    assert caught.value.path == "/color"


def test_removing_a_required_field_is_refused_but_an_optional_one_may_go() -> None:
    with pytest.raises(ValidationError, match="name cannot be removed"):
        patch([{"op": "remove", "path": "/name"}])
    assert patch([{"op": "remove", "path": "/tags"}]).values == {"name": "Old"}


def test_each_value_goes_through_its_rule() -> None:
    with pytest.raises(ValidationError) as caught:
        patch([{"op": "replace", "path": "/name", "value": 7}])
    assert caught.value.path == "/name"
