"""What an edit of a flag changed, as the audit log files it: the environments touched, whether
anything flag-level changed, and a plain on/off switch."""

from __future__ import annotations

import copy
from typing import Any

from flagstaff_server.domain import flag_change


def test_turning_one_environment_on_is_a_switch_in_it(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["test"]["on"] = True
    change = flag_change(flag, after)
    assert (change.environments, change.flag_level, change.switched_on) == (("test",), False, True)
    assert change.environment == "test"


def test_version_bookkeeping_alone_is_no_change(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["_version"] += 1
    after["environments"]["production"]["version"] += 1
    after["environments"]["production"]["lastModified"] += 1
    change = flag_change(flag, after)
    assert (change.environments, change.flag_level) == ((), False)


def test_a_switch_with_another_edit_is_no_plain_switch(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["production"]["on"] = False
    after["environments"]["production"]["offVariation"] = 2
    change = flag_change(flag, after)
    assert (change.environment, change.switched_on) == ("production", None)


def test_flag_level_fields_concern_every_environment(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["name"] = "Renamed"
    after["environments"]["test"]["on"] = True
    change = flag_change(flag, after)
    assert (change.flag_level, change.environment, change.switched_on) == (True, None, None)
    assert change.environments == ("test",)


def test_several_environments_have_no_single_one(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    for config in after["environments"].values():
        config["on"] = not config["on"]
    change = flag_change(flag, after)
    assert change.environments == ("production", "test")
    assert (change.flag_level, change.environment) == (False, None)


def test_added_and_removed_environments_count_as_changed(flag: dict[str, Any]) -> None:
    after = copy.deepcopy(flag)
    after["environments"]["staging"] = after["environments"].pop("test")
    assert flag_change(flag, after).environments == ("staging", "test")


def test_creation_and_deletion_are_flag_level(flag: dict[str, Any]) -> None:
    for change in (flag_change(None, flag), flag_change(flag, None)):
        assert change.flag_level is True
        assert change.environments == ("production", "test")
        assert change.environment is None
