"""LaunchDarkly's client-side evaluation vectors through the browser `evalx` output: for each case,
server-side flags that produce the case's pre-evaluated result are served by a delivery node, the
evalx response for the case's context is read as a client reads it, and must give the expected
value, variation and reason (with and without `withReasons`).

Two reason cases cannot be produced by evaluating flags (an ERROR reason that still carries a
value, which a server never sends); a malformed flag's real evalx result is checked instead.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from conformance.launchdarkly_vectors import Case, load_cases
from delivery_support import change, environment, flag
from flagstaff_core import (
    ClientDetail,
    ValueType,
    decode_client_results,
    has_value_type,
    read_client_result,
)
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.delivery import DeliveryNode
from flagstaff_server.delivery.client_side import ClientDelivery
from support.in_process import asgi_client
from support.prerequisites import SHARED_DIR, shared_path

VECTORS = ("conformance", "launchdarkly", "client-side-eval")
DIRECTORY = SHARED_DIR.joinpath(*VECTORS)
ALL_CASES = load_cases(DIRECTORY) if DIRECTORY.is_dir() else []
CLIENT_SIDE_ID = "c" * 24
WRONG_TYPE = {"kind": "ERROR", "errorKind": "WRONG_TYPE"}
CLIENT_ERRORS = ({"kind": "ERROR", "errorKind": "FLAG_NOT_FOUND"}, WRONG_TYPE)


def realizable(case: Case) -> bool:
    result = case.sdk_data.get(case.flag_key)
    return result is None or (result.get("reason") or {}).get("kind") != "ERROR"


CASES = [case for case in ALL_CASES if realizable(case)]


def test_every_case_is_collected() -> None:
    shared_path(*VECTORS)
    assert len(ALL_CASES) == 30
    assert len(ALL_CASES) - len(CASES) == 2


def b64(obj: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def realize(key: str, result: dict[str, Any], context_key: str) -> list[dict[str, Any]]:
    """Flags (the one named `key` first) whose evaluation for `context_key` is `result`."""
    index = result.get("variation")
    assert isinstance(index, int)
    variations = [result["value"]] * (index + 1)
    reason = result.get("reason") or {"kind": "FALLTHROUGH"}
    kind = reason["kind"]
    experiment = bool(reason.get("inExperiment") or reason.get("isExperiment"))
    served: dict[str, Any] = (
        {"rollout": {"kind": "experiment", "variations": [{"variation": index, "weight": 100000}]}}
        if experiment
        else {"variation": index}
    )
    made = flag(key, variations=tuple(variations), fallthrough=index, off=index)
    made["clientSideAvailability"] = {"usingEnvironmentId": True, "usingMobileKey": True}
    extra: list[dict[str, Any]] = []
    if kind == "OFF":
        made["on"] = False
    elif kind == "FALLTHROUGH":
        made["fallthrough"] = served
    elif kind == "TARGET_MATCH":
        made["targets"] = [{"values": [context_key], "variation": index}]
    elif kind == "RULE_MATCH":
        nobody = {"attribute": "key", "op": "in", "values": ["nobody"], "negate": False}
        everyone = {"attribute": "key", "op": "in", "values": [context_key], "negate": False}
        rules = [{"id": f"filler-{n}", "clauses": [nobody], **served} for n in range(10)]
        rules[reason["ruleIndex"]] = {"id": reason["ruleId"], "clauses": [everyone], **served}
        made["rules"] = rules[: reason["ruleIndex"] + 1]
    elif kind == "PREREQUISITE_FAILED":
        made["prerequisites"] = [{"key": reason["prereqKey"], "variation": 1}]
        extra.append(flag(reason["prereqKey"], on=False))
    else:
        raise AssertionError(f"no flag produces {reason}")
    return [made, *extra]


@pytest.fixture
async def node() -> DeliveryNode:
    store = InMemoryStore()
    node = DeliveryNode(InProcessChangeFeed(store))
    node.apply(change(1, "environment", "production", environment(clientSideId=CLIENT_SIDE_ID)))
    node.current = True
    return node


@pytest.fixture
async def http(node: DeliveryNode) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(ClientDelivery(node), base_url="http://client.test") as client:
        yield client


def serve(node: DeliveryNode, case: Case) -> None:
    context_key = case.context.get("key", "")
    seq = 2
    for key, result in case.sdk_data.items():
        for item in realize(key, result, context_key):
            node.apply(change(seq, "flag", item["key"], item))
            seq += 1


def read(body: dict[str, Any], case: Case) -> ClientDetail:
    detail = read_client_result(decode_client_results(body), case.flag_key, case.default)
    if case.require_capability == "strongly-typed":
        assert case.value_type is not None
        if not has_value_type(detail.value, ValueType(case.value_type)):
            return ClientDetail(case.default, None, WRONG_TYPE)
    return detail


@pytest.mark.parametrize("with_reasons", [True, False])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_evalx_result_reads_as_expected(
    node: DeliveryNode, http: httpx.AsyncClient, case: Case, with_reasons: bool
) -> None:
    serve(node, case)
    query = "?withReasons=true" if with_reasons else ""
    response = await http.get(f"/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{b64(case.context)}{query}")
    assert response.status_code == 200, response.text
    detail = read(response.json(), case)
    expected = case.expect_reason
    # without withReasons only experiments carry their reason (their events must record it)
    experiment = expected.get("inExperiment") or expected.get("isExperiment")
    if not with_reasons and not experiment and expected not in CLIENT_ERRORS:
        expected = {}
    reason = dict(detail.reason or {})
    if experiment:
        expected = {**expected, "inExperiment": True}
        expected.pop("isExperiment", None)
    if "prereqKey" in expected:
        # the vectors' own spelling; LaunchDarkly's wire name (and the SDKs') is prerequisiteKey
        expected = {**expected, "prerequisiteKey": expected["prereqKey"]}
        del expected["prereqKey"]
    assert (detail.value, detail.variation_index, reason) == (
        case.expect_value,
        case.expect_variation,
        expected,
    )


@pytest.mark.parametrize("case", [c for c in CASES if not c.skip_all_flags], ids=lambda c: c.id)
async def test_evalx_values_as_all_flags(
    node: DeliveryNode, http: httpx.AsyncClient, case: Case
) -> None:
    serve(node, case)
    response = await http.get(f"/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{b64(case.context)}")
    values = {key: result.value for key, result in decode_client_results(response.json()).items()}
    expected = case.expect_value if case.expect_variation is not None else None
    assert values.get(case.flag_key) == expected


async def test_malformed_flag_result_has_error_reason_and_no_value(
    node: DeliveryNode, http: httpx.AsyncClient
) -> None:
    broken = flag("broken", fallthrough=7)
    broken["clientSideAvailability"] = {"usingEnvironmentId": True, "usingMobileKey": True}
    node.apply(change(2, "flag", "broken", broken))
    context = b64({"kind": "user", "key": "user-key"})
    response = await http.get(f"/sdk/evalx/{CLIENT_SIDE_ID}/contexts/{context}?withReasons=true")
    result = response.json()["broken"]
    assert (result["value"], result["variation"]) == (None, None)
    assert result["reason"] == {"kind": "ERROR", "errorKind": "MALFORMED_FLAG"}
