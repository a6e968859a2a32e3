"""`Client.all_flags_state()`: the `FeatureFlagsState` object code moving from `ldclient` expects
(valid, per-flag value and reason, values map, bootstrap JSON as a dict and as text), over a data
file and with no data; the options reach it (reasons, client-side only, details only for tracked
flags). Agreement with `ldclient`: tests/differential/test_flags_state_against_official_sdk.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flagstaff_core import all_flags_state, decode_data
from flagstaff_sdk import Client, Config, Context, FeatureFlagsState

USER = Context.create("user-1")
DATA = {
    "flags": {
        "plain": {
            "key": "plain",
            "version": 4,
            "on": True,
            "fallthrough": {"variation": 0},
            "variations": ["hello", "bye"],
            "clientSide": True,
        },
        "tracked": {
            "key": "tracked",
            "version": 7,
            "on": True,
            "fallthrough": {"variation": 1},
            "variations": [False, True],
            "trackEvents": True,
        },
        "off-without-variation": {
            "key": "off-without-variation",
            "version": 2,
            "on": False,
            "variations": [1, 2],
        },
    },
    "segments": {},
}


@pytest.fixture
def client(tmp_path: Path) -> Client:
    path = tmp_path / "flags.json"
    path.write_text(json.dumps(DATA), encoding="utf-8")
    return Client(Config(sdk_key="sdk-k", data_files=(path,), send_events=False))


def test_the_state_answers_each_flag_like_ldclients_object(client: Client) -> None:
    with client:
        state = client.all_flags_state(USER)
        assert isinstance(state, FeatureFlagsState)
        assert state.valid is True
        assert state.get_flag_value("plain") == "hello"
        assert state.get_flag_value("tracked") is True
        assert state.get_flag_value("off-without-variation") is None  # the default would apply
        assert state.get_flag_value("missing") is None
        assert state.get_flag_reason("plain") is None  # reasons were not asked for
        assert state.get_flag_reason("missing") is None
        assert state.to_values_map() == {
            "plain": "hello",
            "tracked": True,
            "off-without-variation": None,
        }
        with_reasons = client.all_flags_state(USER, with_reasons=True)
        assert with_reasons.get_flag_reason("plain") == {"kind": "FALLTHROUGH"}
        assert with_reasons.get_flag_reason("off-without-variation") == {"kind": "OFF"}


def test_the_bootstrap_json_is_the_cores_as_a_dict_and_as_text(client: Client) -> None:
    with client:
        state = client.all_flags_state(USER, with_reasons=True)
        expected = all_flags_state(decode_data(DATA), USER, with_reasons=True)
        assert state.to_json_dict() == expected
        assert json.loads(state.to_json_string()) == expected
        assert state.to_json_dict()["$flagsState"]["tracked"] == {
            "variation": 1,
            "version": 7,
            "reason": {"kind": "FALLTHROUGH"},
            "trackEvents": True,
        }


def test_the_options_reach_the_state(client: Client) -> None:
    with client:
        client_side = client.all_flags_state(USER, client_side_only=True)
        assert client_side.to_values_map() == {"plain": "hello"}
        tracked_only = client.all_flags_state(
            USER, with_reasons=True, details_only_for_tracked_flags=True
        )
        meta = tracked_only.to_json_dict()["$flagsState"]
        assert meta["plain"] == {"variation": 0}  # neither version nor reason
        assert meta["tracked"]["version"] == 7
        assert tracked_only.get_flag_reason("plain") is None
        assert tracked_only.get_flag_reason("tracked") == {"kind": "FALLTHROUGH"}


def test_what_the_methods_return_is_the_callers_to_change(client: Client) -> None:
    with client:
        state = client.all_flags_state(USER)
        state.to_values_map()["plain"] = "changed"
        state.to_json_dict()["$flagsState"]["plain"]["version"] = 99
        assert state.get_flag_value("plain") == "hello"
        assert state.to_json_dict()["$flagsState"]["plain"]["version"] == 4


def test_without_data_or_with_an_invalid_context_the_state_is_not_valid(client: Client) -> None:
    with Client(Config(sdk_key="k", offline=True)) as offline:
        state = offline.all_flags_state(USER)
        assert state.valid is False
        assert state.to_values_map() == {}
        assert state.to_json_dict() == {"$flagsState": {}, "$valid": False}
        assert state.to_json_string() == '{"$flagsState": {}, "$valid": false}'
    with client:
        invalid = client.all_flags_state({"kind": "user"})  # no key
        assert invalid.valid is False
        assert invalid.get_flag_value("plain") is None
