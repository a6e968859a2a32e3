"""The pure parts of `flagstaff code-refs`: alias conventions, the combined matcher's boundaries,
hunks with context lines, the configuration's checks, and when a flag is stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.code_refs.aliases import aliases_of, convert
from flagstaff_server.code_refs.config import ConfigError, parse_config
from flagstaff_server.code_refs.hunks import hunks_of
from flagstaff_server.code_refs.matcher import Matcher
from flagstaff_server.code_refs.scan import pattern_aliases
from flagstaff_server.domain.flag_staleness import NEW_FOR_MS, staleness


@pytest.mark.parametrize(
    ("convention", "alias"),
    [
        ("camelcase", "newCheckoutV2"),
        ("pascalcase", "NewCheckoutV2"),
        ("snakecase", "new_checkout_v2"),
        ("uppersnakecase", "NEW_CHECKOUT_V2"),
        ("kebabcase", "new-checkout-v2"),
        ("dotcase", "new.checkout.v2"),
    ],
)
def test_a_key_converts_to_each_convention(convention: str, alias: str) -> None:
    assert convert("new-checkout-v2", convention) == alias
    assert convert("newCheckout_v2", convention) == alias


def test_aliases_leave_out_the_key_itself_and_repeats() -> None:
    assert aliases_of("beta", ["camelcase", "snakecase", "uppersnakecase"]) == ["BETA"]
    assert aliases_of("a-b", ["camelcase"], {"a-b": ["aB", "isAB"]}) == ["aB", "isAB"]


def test_the_matcher_finds_whole_keys_and_aliases_only() -> None:
    matcher = Matcher({"foo": ["FOO"], "foo-bar": ["fooBar"]})
    text = b'x("foo") y("foo-bar") foo-barz xfoo fooBar FOO_X FOO.value'
    hits = [(text[h.start : h.end].decode(), h.term.keys) for h in matcher.hits(text)]
    assert hits == [
        ("foo", ("foo",)),
        ("foo-bar", ("foo-bar",)),
        ("fooBar", ("foo-bar",)),
        ("FOO", ("foo",)),
    ]
    assert Matcher({}).hits(b"anything") == []


def test_an_alias_shared_by_two_keys_counts_for_both() -> None:
    (hit,) = Matcher({"a-b": ["AB"], "a.b": ["AB"]}).hits(b"use(AB)")
    assert set(hit.term.keys) == {"a-b", "a.b"}


def test_hunks_widen_by_the_context_lines_and_merge_where_they_touch() -> None:
    text = b"".join(f"line {n}\n".encode() for n in range(1, 11))
    text = text.replace(b"line 2\n", b'f("k")\n').replace(b"line 4\n", b"K\n")
    text = text.replace(b"line 9\n", b'f("k")\n')
    hits = Matcher({"k": ["K"]}).hits(text)
    first, second = hunks_of(text, hits, project="p", context_lines=1)
    assert (first["startingLineNumber"], first["lines"].count("\n") + 1) == (1, 5)
    assert first["aliases"] == ["K"]
    assert first["flagKey"] == "k"
    assert first["projKey"] == "p"
    assert (second["startingLineNumber"], second["lines"]) == (8, 'line 8\nf("k")\nline 10')
    bare = hunks_of(text, hits, project="p", context_lines=-1)
    assert [h["startingLineNumber"] for h in bare] == [2, 4, 9]
    assert {h["lines"] for h in bare} == {""}


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ({"contextLines": 9}, "contextLines"),
        ({"colour": 1}, "colour"),
        ({"aliases": {"conventions": ["shout"]}}, "aliases.conventions"),
        ({"aliases": {"filePattern": [{"paths": ["a"], "patterns": ["(x)"]}]}}, "FLAG_KEY"),
        ({"aliases": {"filePattern": [{"paths": ["a"], "patterns": ["x FLAG_KEY"]}]}}, "group"),
        ({"aliases": {"literal": {"k": "notalist"}}}, "aliases.literal.k"),
    ],
)
def test_a_bad_setting_is_named(document: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        parse_config(document)


def _flag(**environments: dict[str, object]) -> dict[str, object]:
    return {
        "creationDate": 0,
        "variations": [{"value": True}, {"value": False}],
        "environments": environments,
    }


def test_a_flag_is_stale_when_archived_or_serving_one_value_everywhere_once_a_week_old() -> None:
    week = NEW_FOR_MS
    off = {"on": False, "offVariation": 1}
    launched = {"on": True, "fallthrough": {"variation": 1}, "rules": [], "targets": []}
    targeted = {**launched, "targets": [{"values": ["u"], "variation": 0}]}
    assert staleness(_flag(a=off, b=launched), week).stale
    assert not staleness(_flag(a=off, b=launched), week - 1).stale  # new
    assert not staleness(_flag(a=off, b=targeted), week).stale
    assert not staleness(_flag(a=off, b={**launched, "fallthrough": {"variation": 0}}), week).stale
    assert staleness({**_flag(a=targeted), "archived": True}, 0).reason == "archived"


def test_a_file_pattern_takes_its_own_first_group_before_or_after_the_key(
    tmp_path: Path,
) -> None:
    (tmp_path / "flags.py").write_text('CHECKOUT = "new-checkout"\n')
    (tmp_path / "flags.json").write_text('{"dark-mode": "DarkTheme"}\n')
    config = parse_config(
        {
            "aliases": {
                "conventions": [],
                "filePattern": [
                    {"paths": ["*.py"], "patterns": ['(\\w+) = "FLAG_KEY"']},
                    {"paths": ["*.json"], "patterns": ['"FLAG_KEY": "(\\w+)"']},
                ],
            }
        }
    )
    found = pattern_aliases(
        tmp_path, config, ["new-checkout", "dark-mode"], ["flags.py", "flags.json"]
    )
    assert found == {"new-checkout": ["CHECKOUT"], "dark-mode": ["DarkTheme"]}
