"""`flagstaff gameday`: `--list` names every scenario with its summary; an unknown scenario, a
missing one and out-of-range sizes are one line on stderr with exit 2, before anything starts.
(Real runs: tests/integration/gameday.)"""

from __future__ import annotations

import pytest
from flagstaff_server.cli import main
from flagstaff_server.gameday.scenarios import SCENARIOS


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["gameday", *args])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_names_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--list")
    assert code == 0
    listed = [line.split("\t")[0] for line in out.splitlines()]
    assert listed == list(SCENARIOS)
    assert "control-plane-down" in listed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("no-such-scenario",), "unknown scenario 'no-such-scenario'"),
        ((), "name a scenario"),
        (("control-plane-down", "--clients", "0"), "--clients must be between"),
        (("control-plane-down", "--duration", "1"), "--duration must be between"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


def test_a_non_number_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "control-plane-down", "--clients", "many")
    assert code == 2
    assert "--clients" in err
