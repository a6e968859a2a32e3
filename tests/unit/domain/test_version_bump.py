"""Version bookkeeping: `_version` per edit, environment versions only where the config changed."""

from __future__ import annotations

import copy
from typing import Any

from flagstaff_server.domain import bump_segment_version, bump_versions
from flagstaff_server.domain.flag import present_flag

LATER = 1_700_000_999_000


def test_nothing_changed_keeps_every_version(flag: dict[str, Any]) -> None:
    bump = bump_versions(flag, copy.deepcopy(flag), LATER)
    assert bump.changed is False
    assert bump.changed_environments == ()
    assert bump.document == flag


def test_one_environment_changed(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["test"]["on"] = True
    bump = bump_versions(flag, after, LATER)
    assert bump.changed is True
    assert bump.changed_environments == ("test",)
    assert bump.document["_version"] == flag["_version"] + 1
    assert bump.document["environments"]["test"]["version"] == 2
    assert bump.document["environments"]["test"]["lastModified"] == LATER
    assert bump.document["environments"]["production"] == flag["environments"]["production"]
    assert after["environments"]["test"]["version"] == 1


def test_rest_only_change_in_an_environment_still_counts(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["production"]["rules"][0]["description"] = "why"
    assert bump_versions(flag, after, LATER).changed_environments == ("production",)


def test_flag_level_metadata_change_bumps_no_environment(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["description"] = "new words"
    after["tags"] = ["x"]
    bump = bump_versions(flag, after, LATER)
    assert bump.changed is True
    assert bump.document["_version"] == 2
    assert bump.changed_environments == ()


def test_sdk_visible_flag_level_change_bumps_every_environment(flag: dict[str, Any]) -> None:
    for edit in (
        lambda d: d["variations"][0].__setitem__("value", "crimson"),
        lambda d: d["clientSideAvailability"].__setitem__("usingEnvironmentId", True),
    ):
        after = copy.deepcopy(flag)
        edit(after)
        bump = bump_versions(flag, after, LATER)
        assert set(bump.changed_environments) == {"production", "test"}
        assert all(config["version"] == 2 for config in bump.document["environments"].values())


def test_variation_name_change_is_not_sdk_visible(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["variations"][0]["name"] = "Red"
    assert bump_versions(flag, after, LATER).changed_environments == ()


def test_bookkeeping_differences_alone_are_no_change(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["test"]["lastModified"] = 5
    after["environments"]["test"]["_summary"] = {}
    assert bump_versions(flag, after, LATER).changed is False


def test_new_environment_counts_as_changed(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["staging"] = copy.deepcopy(after["environments"]["test"])
    bump = bump_versions(flag, after, LATER)
    assert bump.changed_environments == ("staging",)
    assert bump.document["environments"]["staging"]["version"] == 1


def test_segment_version_bump() -> None:
    segment = {"key": "s", "name": "S", "version": 4, "lastModifiedDate": 1, "included": []}
    assert bump_segment_version(segment, copy.deepcopy(segment), LATER).changed is False
    after = {**copy.deepcopy(segment), "included": ["u"]}
    bump = bump_segment_version(segment, after, LATER)
    assert bump.changed is True
    assert (bump.document["version"], bump.document["lastModifiedDate"]) == (5, LATER)


def test_neither_the_bump_nor_the_presentation_changes_the_documents_they_read(
    flag: dict[str, Any],
) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["test"]["on"] = True
    after_as_edited, flag_as_stored = copy.deepcopy(after), copy.deepcopy(flag)
    bumped = bump_versions(flag, after, LATER).document
    shown = present_flag(bumped, project_key="p")
    assert after == after_as_edited
    assert flag == flag_as_stored
    assert "_links" not in bumped
    assert all("_summary" not in config for config in bumped["environments"].values())
    assert all("_summary" in config for config in shown["environments"].values())
