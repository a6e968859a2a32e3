"""LaunchDarkly's client-side evaluation vectors: reading pre-evaluated results as a client does.

Run with and without reasons in the data, as the SDK test harness does; without them only the
errors a client produces itself (FLAG_NOT_FOUND, WRONG_TYPE) carry a reason.
"""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import (
    ClientDetail,
    ValueType,
    decode_client_results,
    has_value_type,
    read_client_result,
)
from launchdarkly_vectors import Case, load_cases
from support.prerequisites import SHARED_DIR, shared_path

VECTORS = ("conformance", "launchdarkly", "client-side-eval")
_DIRECTORY = SHARED_DIR.joinpath(*VECTORS)
CASES = load_cases(_DIRECTORY) if _DIRECTORY.is_dir() else []
_CLIENT_ERRORS = ({"kind": "ERROR", "errorKind": "FLAG_NOT_FOUND"},)
_WRONG_TYPE = {"kind": "ERROR", "errorKind": "WRONG_TYPE"}


def test_every_case_is_collected() -> None:
    directory = shared_path(*VECTORS)
    assert len(list(directory.glob("*.yml"))) == 4
    assert len(CASES) == 30
    assert sum(c.require_capability == "strongly-typed" for c in CASES) == 6


def _without_reasons(sdk_data: dict[str, Any]) -> dict[str, Any]:
    return {key: {k: v for k, v in r.items() if k != "reason"} for key, r in sdk_data.items()}


def _read(case: Case, with_reasons: bool) -> ClientDetail:
    sdk_data = case.sdk_data if with_reasons else _without_reasons(case.sdk_data)
    detail = read_client_result(decode_client_results(sdk_data), case.flag_key, case.default)
    if case.require_capability == "strongly-typed":
        assert case.value_type is not None
        if not has_value_type(detail.value, ValueType(case.value_type)):
            return ClientDetail(case.default, None, _WRONG_TYPE)
    return detail


@pytest.mark.parametrize("with_reasons", [True, False])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_detailed_read(case: Case, with_reasons: bool) -> None:
    detail = _read(case, with_reasons)
    expected_reason = case.expect_reason
    if not with_reasons and expected_reason not in (*_CLIENT_ERRORS, _WRONG_TYPE):
        expected_reason = {}
    assert (detail.value, detail.variation_index, dict(detail.reason or {})) == (
        case.expect_value,
        case.expect_variation,
        expected_reason,
    )


@pytest.mark.parametrize("case", [c for c in CASES if not c.skip_all_flags], ids=lambda c: c.id)
def test_all_flags(case: Case) -> None:
    results = decode_client_results(case.sdk_data)
    values = {key: result.value for key, result in results.items()}
    expected = case.expect_value if case.expect_variation is not None else None
    assert values.get(case.flag_key) == expected
