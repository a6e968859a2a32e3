"""`flagstaff eval`: results for the demo data file, output shapes, and every bad-input path.

Expected answers follow from LaunchDarkly's evaluation rules applied to the demo data file
docs/examples/demo-flags.json (targets before rules, rules in order, segment exclusions before
segment rules, SHA-1 bucketing).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flagstaff_server.cli import main
from support.processes import FLAGSTAFF_SCRIPT

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO = REPO_ROOT / "docs" / "examples" / "demo-flags.json"
DEMO_KEYS = ["checkout-experiment", "new-dashboard", "payments-enabled", "staff-banner"]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def evaluate_one(capsys: pytest.CaptureFixture[str], context: dict[str, Any], *args: str) -> Any:
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--context", json.dumps(context), *args)
    assert (code, err) == (0, "")
    return json.loads(out)


def experiment_variation(key: str) -> int:
    """checkout-experiment's 50/50 split by LaunchDarkly's bucketing: SHA-1 of "seed.key"."""
    digest = hashlib.sha1(f"61.{key}".encode()).hexdigest()
    bucket = int(digest[:15], 16) / 0xFFFFFFFFFFFFFFF
    return 0 if bucket < 0.5 else 1


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def demo_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DEMO.read_text(encoding="utf-8"))
    return copy.deepcopy(document)


def assert_clean_failure(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 1
    assert out == ""
    assert err.startswith("flagstaff eval: ")
    assert err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err


# --- answers ---------------------------------------------------------------------------------


def test_one_flag_rule_on_email_suffix_matches(capsys: pytest.CaptureFixture[str]) -> None:
    context = {"kind": "user", "key": "ana", "email": "ana@flagstaff.example"}
    result = evaluate_one(capsys, context, "--flag", "staff-banner")
    assert result == {
        "staff-banner": {
            "value": True,
            "variationIndex": 0,
            "reason": {"kind": "RULE_MATCH", "ruleIndex": 0, "ruleId": "staff-email"},
        }
    }


def test_one_flag_falls_through_when_email_suffix_differs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    context = {"kind": "user", "key": "bo", "email": "bo@flagstaff.example.org"}
    result = evaluate_one(capsys, context, "--flag", "staff-banner")
    assert result["staff-banner"] == {
        "value": False,
        "variationIndex": 1,
        "reason": {"kind": "FALLTHROUGH"},
    }


def test_targeted_key_gets_target_match_before_the_experiment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = evaluate_one(
        capsys, {"kind": "user", "key": "qa-olivia"}, "--flag", "checkout-experiment"
    )
    assert result == {
        "checkout-experiment": {
            "value": "one-page",
            "variationIndex": 1,
            "reason": {"kind": "TARGET_MATCH"},
        }
    }


def test_all_flags_for_a_segment_member(capsys: pytest.CaptureFixture[str]) -> None:
    result = evaluate_one(capsys, {"kind": "user", "key": "beta-ben"})
    assert list(result) == DEMO_KEYS
    variation = experiment_variation("beta-ben")
    assert result == {
        "checkout-experiment": {
            "value": ["classic", "one-page"][variation],
            "variationIndex": variation,
            "reason": {"kind": "FALLTHROUGH", "inExperiment": True},
        },
        "new-dashboard": {
            "value": True,
            "variationIndex": 0,
            "reason": {"kind": "RULE_MATCH", "ruleIndex": 0, "ruleId": "beta-testers"},
        },
        "payments-enabled": {"value": True, "variationIndex": 0, "reason": {"kind": "FALLTHROUGH"}},
        "staff-banner": {"value": False, "variationIndex": 1, "reason": {"kind": "FALLTHROUGH"}},
    }


def test_segment_exclusion_wins_over_segment_rule(capsys: pytest.CaptureFixture[str]) -> None:
    context = {"kind": "user", "key": "former-beta-fay", "plan": "beta"}
    result = evaluate_one(capsys, context, "--flag", "new-dashboard")
    assert result["new-dashboard"]["reason"] == {"kind": "FALLTHROUGH"}
    other = evaluate_one(capsys, {**context, "key": "newcomer"}, "--flag", "new-dashboard")
    assert other["new-dashboard"]["reason"]["kind"] == "RULE_MATCH"


def test_context_without_the_rollout_kind_is_not_in_the_experiment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The rollout buckets user contexts; an org context lands in bucket 0 (the first variation)
    # and is not part of the experiment. The segment includes org "acme" by includedContexts.
    result = evaluate_one(capsys, {"kind": "org", "key": "acme"})
    assert result["checkout-experiment"] == {
        "value": "classic",
        "variationIndex": 0,
        "reason": {"kind": "FALLTHROUGH"},
    }
    assert result["new-dashboard"]["reason"]["kind"] == "RULE_MATCH"


def test_old_user_format_context_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    result = evaluate_one(capsys, {"key": "ana", "email": "ana@flagstaff.example"})
    assert result["staff-banner"]["reason"]["kind"] == "RULE_MATCH"


def test_kill_switch_off_serves_off_variation_and_fails_dependents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = demo_document()
    document["flags"]["payments-enabled"]["on"] = False
    data = write_json(tmp_path / "killed.json", document)
    context = json.dumps({"kind": "user", "key": "beta-ben"})
    code, out, err = run_cli(capsys, "--data", str(data), "--context", context)
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["payments-enabled"] == {
        "value": False,
        "variationIndex": 1,
        "reason": {"kind": "OFF"},
    }
    assert result["new-dashboard"] == {
        "value": False,
        "variationIndex": 1,
        "reason": {"kind": "PREREQUISITE_FAILED", "prerequisiteKey": "payments-enabled"},
    }


def test_no_chosen_variation_prints_null_value(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = demo_document()
    document["flags"]["staff-banner"].update(on=False, offVariation=None)
    data = write_json(tmp_path / "no-off.json", document)
    context = json.dumps({"kind": "user", "key": "ana"})
    code, out, _ = run_cli(
        capsys, "--data", str(data), "--context", context, "--flag", "staff-banner"
    )
    assert code == 0
    assert json.loads(out) == {
        "staff-banner": {"value": None, "variationIndex": None, "reason": {"kind": "OFF"}}
    }


def test_flag_values_become_always_on_flags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = write_json(tmp_path / "values.json", {"flagValues": {"greeting": "hello"}})
    code, out, _ = run_cli(capsys, "--data", str(data), "--context", '{"key": "u"}')
    assert code == 0
    assert json.loads(out) == {
        "greeting": {"value": "hello", "variationIndex": 0, "reason": {"kind": "FALLTHROUGH"}}
    }


def test_single_context_output_is_indented(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--data", str(DEMO), "--context", '{"key": "u"}')
    assert code == 0
    assert out == json.dumps(json.loads(out), indent=2) + "\n"


def test_contexts_file_gives_one_compact_line_per_context_in_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    keys = ["staff-1", "guest-1", "staff-2", "guest-2", "qa-olivia"]
    contexts = [
        {
            "kind": "user",
            "key": key,
            "email": f"{key}@{'flagstaff' if 'staff' in key else 'x'}.example",
        }
        for key in keys
    ]
    lines = tmp_path / "contexts.jsonl"
    lines.write_text("".join(json.dumps(c) + "\n" for c in contexts) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--contexts", str(lines))
    assert (code, err) == (0, "")
    output = out.splitlines()
    assert len(output) == len(contexts)
    results = [json.loads(line) for line in output]
    for line, result in zip(output, results, strict=True):
        assert line == json.dumps(result, separators=(",", ":"))
    assert [r["staff-banner"]["value"] for r in results] == [True, False, True, False, False]
    assert [r["checkout-experiment"]["reason"]["kind"] for r in results][-1] == "TARGET_MATCH"
    # Each line is exactly what --context gives for that context.
    for context, result in zip(contexts, results, strict=True):
        assert evaluate_one(capsys, context) == result


def test_contexts_file_with_one_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = write_json(tmp_path / "one.jsonl", {"kind": "user", "key": "qa-olivia"})
    code, out, _ = run_cli(
        capsys, "--data", str(DEMO), "--contexts", str(lines), "--flag", "checkout-experiment"
    )
    assert code == 0
    assert list(json.loads(out)) == ["checkout-experiment"]


def test_contexts_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = '{"kind": "user", "key": "qa-olivia"}\n{"kind": "org", "key": "acme"}\n'
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code, out, _ = run_cli(
        capsys, "--data", str(DEMO), "--contexts", "-", "--flag", "checkout-experiment"
    )
    assert code == 0
    kinds = [json.loads(line)["checkout-experiment"]["reason"]["kind"] for line in out.splitlines()]
    assert kinds == ["TARGET_MATCH", "FALLTHROUGH"]


# --- bad input -------------------------------------------------------------------------------


def test_a_bad_line_on_standard_input_is_named_as_such(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"key": "a"}\nnot json\n'))
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--contexts", "-")
    assert_clean_failure(code, out, err, "standard input line 2 is not valid JSON")


def test_missing_data_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    code, out, err = run_cli(capsys, "--data", str(missing), "--context", '{"key": "u"}')
    assert_clean_failure(code, out, err, f"cannot read {missing}", "No such file")


def test_data_file_that_is_not_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"flags": {\n  "a": tru\n}', encoding="utf-8")
    code, out, err = run_cli(capsys, "--data", str(broken), "--context", '{"key": "u"}')
    assert_clean_failure(code, out, err, f"{broken} is not valid JSON", "line 2")


def test_data_that_fails_decoding_names_the_json_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = demo_document()
    document["flags"]["staff-banner"]["rules"][0]["clauses"][0]["op"] = 42
    data = write_json(tmp_path / "bad-op.json", document)
    code, out, err = run_cli(capsys, "--data", str(data), "--context", '{"key": "u"}')
    assert_clean_failure(
        code, out, err, "invalid data at $.flags.staff-banner.rules[0].clauses[0].op"
    )


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ([], "$"),
        ({"flags": []}, "$.flags"),
        ({"segments": "none"}, "$.segments"),
        ({"flagValues": 3}, "$.flagValues"),
    ],
)
def test_data_file_of_the_wrong_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: Any, path: str
) -> None:
    data = write_json(tmp_path / "shape.json", document)
    code, out, err = run_cli(capsys, "--data", str(data), "--context", '{"key": "u"}')
    assert_clean_failure(code, out, err, f"invalid data at {path}:")


def test_flag_in_both_flags_and_flag_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = demo_document()
    document["flagValues"] = {"staff-banner": True}
    data = write_json(tmp_path / "dup.json", document)
    code, out, err = run_cli(capsys, "--data", str(data), "--context", '{"key": "u"}')
    assert_clean_failure(code, out, err, "$.flagValues.staff-banner", "'staff-banner'")


def test_context_that_is_not_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--context", "{key: u}")
    assert_clean_failure(code, out, err, "--context is not valid JSON")


@pytest.mark.parametrize(
    "context",
    [
        {"kind": "user", "key": ""},
        {"kind": "multi"},
        {"kind": "kind", "key": "k"},
        {"kind": "user"},
        "just-a-string",
    ],
)
def test_invalid_context(capsys: pytest.CaptureFixture[str], context: Any) -> None:
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--context", json.dumps(context))
    assert_clean_failure(code, out, err, "--context is not a valid context")


def test_bad_jsonl_line_is_named_and_nothing_is_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = tmp_path / "contexts.jsonl"
    lines.write_text('{"key": "a"}\n{"key": "b"}\n{"key": \n{"key": "d"}\n', encoding="utf-8")
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--contexts", str(lines))
    assert_clean_failure(code, out, err, f"{lines} line 3 is not valid JSON")


def test_invalid_context_on_a_jsonl_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = tmp_path / "contexts.jsonl"
    lines.write_text('{"key": "a"}\n{"kind": "user", "key": ""}\n', encoding="utf-8")
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--contexts", str(lines))
    assert_clean_failure(code, out, err, f"{lines} line 2 is not a valid context")


def test_blank_line_inside_a_jsonl_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = tmp_path / "contexts.jsonl"
    lines.write_text('{"key": "a"}\n\n{"key": "c"}\n', encoding="utf-8")
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--contexts", str(lines))
    assert_clean_failure(code, out, err, f"{lines} line 2: empty line")


def test_empty_jsonl_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = tmp_path / "contexts.jsonl"
    lines.write_text("\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "--data", str(DEMO), "--contexts", str(lines))
    assert_clean_failure(code, out, err, "has no contexts")


def test_missing_jsonl_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_cli(
        capsys, "--data", str(DEMO), "--contexts", str(tmp_path / "absent.jsonl")
    )
    assert_clean_failure(code, out, err, "cannot read", "No such file")


def test_unknown_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "--data", str(DEMO), "--context", '{"key": "u"}', "--flag", "no-such-flag"
    )
    assert_clean_failure(code, out, err, "no flag 'no-such-flag'")


@pytest.mark.parametrize(
    "args",
    [
        ["--data", str(DEMO)],
        ["--data", str(DEMO), "--context", "{}", "--contexts", "x.jsonl"],
        ["--context", '{"key": "u"}'],
    ],
)
def test_wrong_usage_exits_with_two(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", *args])
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


# --- as a real process -----------------------------------------------------------------------


def test_installed_command_evaluates_and_fails_cleanly(tmp_path: Path) -> None:
    assert FLAGSTAFF_SCRIPT.exists(), f"{FLAGSTAFF_SCRIPT} is not installed (run make install)"
    context = json.dumps({"kind": "user", "key": "qa-olivia"})
    done = subprocess.run(
        [
            str(FLAGSTAFF_SCRIPT),
            "eval",
            "--data",
            str(DEMO),
            "--context",
            context,
            "--flag",
            "checkout-experiment",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["checkout-experiment"]["reason"] == {"kind": "TARGET_MATCH"}

    failed = subprocess.run(
        [
            str(FLAGSTAFF_SCRIPT),
            "eval",
            "--data",
            str(tmp_path / "absent.json"),
            "--context",
            context,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert failed.returncode == 1
    assert failed.stdout == ""
    assert failed.stderr.startswith("flagstaff eval: cannot read")
    assert "Traceback" not in failed.stderr
