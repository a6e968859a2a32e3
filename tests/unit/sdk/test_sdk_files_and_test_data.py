"""Offline sources: LaunchDarkly data files (flags, segments, flagValues; auto-reload) and the
TestData builder (variations, on/off, targets, rules, fallthrough, value for all; updates
propagate to every client using it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from delivery_support import flag, segment, segment_rule_flag
from flagstaff_sdk import (
    Client,
    Config,
    Context,
    ContextBuilder,
    DataFileError,
    DataSourceState,
    FlagValueChange,
    ReasonKind,
    TestData,
    Timing,
)
from flagstaff_sdk.data_file import read_data_files
from support.deadlines import wait_until

USER = Context.create("user-1")


def write_json(path: Path, document: Any) -> None:
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(document))
    os.replace(temp, path)


def file_client(*paths: Path, auto_reload: bool = False) -> Client:
    return Client(
        Config(
            sdk_key="any",
            data_files=paths,
            auto_reload=auto_reload,
            send_events=False,
            timing=Timing(file_reload_interval=0.02),
        )
    )


def test_data_files_serve_flags_segments_and_flag_values(tmp_path: Path) -> None:
    first = tmp_path / "one.json"
    second = tmp_path / "two.json"
    write_json(first, {"flags": {"in-beta": segment_rule_flag("in-beta", "beta")}})
    write_json(
        second,
        {"segments": {"beta": segment("beta", included=("user-1",))}, "flagValues": {"v": 42}},
    )
    with file_client(first, second) as client:
        assert client.variation("in-beta", USER, None) is True
        assert client.variation("in-beta", Context.create("user-2"), None) is False
        assert client.int_variation("v", USER, 0) == 42
        status = client.data_source_status()
        assert status.state is DataSourceState.VALID
        assert status.source == "file"


def test_a_key_defined_twice_or_a_bad_flag_loads_nothing(tmp_path: Path) -> None:
    first = tmp_path / "one.json"
    second = tmp_path / "two.json"
    write_json(first, {"flags": {"a": flag("a")}})
    write_json(second, {"flagValues": {"a": 1}})
    with pytest.raises(DataFileError, match="defined twice"):
        read_data_files([first, second])
    write_json(second, {"flags": {"b": {"key": "b", "on": "yes"}}})
    with file_client(first, second) as client:
        assert not client.is_initialized()
        assert client.variation("a", USER, "default") == "default"
        status = client.data_source_status()
        assert status.last_error is not None
        assert status.last_error.kind == "file"


def test_auto_reload_picks_up_a_changed_file_even_without_a_version_bump(tmp_path: Path) -> None:
    path = tmp_path / "flags.json"
    write_json(path, {"flagValues": {"greeting": "hello"}})
    with file_client(path, auto_reload=True) as client:
        heard: list[FlagValueChange] = []
        client.add_flag_value_listener("greeting", USER, heard.append)
        assert client.variation("greeting", USER, None) == "hello"
        write_json(path, {"flagValues": {"greeting": "bonjour"}})
        wait_until(lambda: client.variation("greeting", USER, None) == "bonjour")
        wait_until(lambda: heard == [FlagValueChange("greeting", "hello", "bonjour")])
        path.write_text("{broken")
        wait_until(lambda: client.data_source_status().state is DataSourceState.INTERRUPTED)
        assert client.variation("greeting", USER, None) == "bonjour"


def test_test_data_builder_covers_targets_rules_fallthrough_and_off() -> None:
    td = TestData.data_source()
    td.update(
        td.flag("color")
        .variations("red", "green", "blue")
        .fallthrough_variation(0)
        .off_variation(2)
        .variation_for_user("alice", 1)
        .variation_for_key("org", "acme", 2)
        .if_match("email", "x@y.z")
        .and_not_match("country", "fr")
        .then_return(1)
    )
    td.update(td.flag("bool"))
    with Client(Config(sdk_key="k", data_source=td, send_events=False)) as client:
        assert client.variation("color", USER, None) == "red"
        alice = client.variation_detail("color", Context.create("alice"), None)
        assert (alice.value, alice.reason.kind) == ("green", ReasonKind.TARGET_MATCH)
        assert client.variation("color", Context.create("acme", "org"), None) == "blue"
        # (a negated clause on a missing attribute does not match, as in LaunchDarkly)
        matched = ContextBuilder("bob").set("email", "x@y.z").set("country", "us").build()
        detail = client.variation_detail("color", matched, None)
        assert (detail.value, detail.reason.kind) == ("green", ReasonKind.RULE_MATCH)
        french = ContextBuilder("bob").set("email", "x@y.z").set("country", "fr").build()
        assert client.variation("color", french, None) == "red"
        assert client.variation("bool", USER, False) is True

        td.update(td.flag("color").on(False))
        assert client.variation("color", Context.create("alice"), None) == "blue"
        td.update(td.flag("color").value_for_all({"any": "json"}))
        assert client.json_variation("color", matched, None) == {"any": "json"}
        td.update(td.flag("bool").variation_for_all(False))
        assert client.bool_variation("bool", USER, True) is False


def test_test_data_updates_reach_every_client_and_their_listeners() -> None:
    td = TestData()
    td.update(td.flag("f").variation_for_all(False))
    config = Config(sdk_key="k", data_source=td, send_events=False)
    with Client(config) as one, Client(config) as two:
        changed: list[str] = []
        two.add_flag_change_listener(lambda change: changed.append(change.key))
        td.update(td.flag("f").variation_for_all(True))
        assert one.variation("f", USER, None) is True
        assert two.variation("f", USER, None) is True
        wait_until(lambda: changed == ["f"])
        td.use_preconfigured_segment(segment("s", included=("user-1",)))
        td.use_preconfigured_flag(segment_rule_flag("seg", "s"))
        assert one.variation("seg", USER, None) is True
    td.update(td.flag("f").variation_for_all(False))  # closed clients are detached
    assert one.variation("f", USER, None) is True
