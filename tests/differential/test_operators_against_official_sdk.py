"""Exhaustive differential test of clause operators: every operator, clause value and context value
of the shared pools, evaluated by flagstaff_core and by the official Python SDK 9.18.4.

Random data sets meet a given pair of values rarely; this covers all pairs in one pass.
"""

from __future__ import annotations

import json
from typing import Any

from flagstaff_core import decode_context, decode_data, evaluate_key
from official_sdk import load
from strategies import OPERATORS, SCALARS, UNKNOWN_OPERATOR, clause_value_pool

# Context values: every scalar, an array mixing types, and an object (which no operator matches).
CONTEXT_VALUES: tuple[Any, ...] = (*SCALARS, ["beta", 10, "1.2.3"], {"city": "alpha"})


def operator_flags() -> dict[str, Any]:
    """One flag per (operator, clause value, negate): a single-clause rule on attribute `probe`."""
    flags = {}
    for op in (*OPERATORS, UNKNOWN_OPERATOR):
        if op == "segmentMatch":
            continue
        for index, value in enumerate(clause_value_pool(op)):
            for negate in (False, True):
                key = f"{op}-{index}-{'not' if negate else 'is'}"
                clause = {
                    "contextKind": "user",
                    "attribute": "probe",
                    "op": op,
                    "values": [value],
                    "negate": negate,
                }
                flags[key] = {
                    "key": key,
                    "version": 1,
                    "on": True,
                    "variations": [False, True],
                    "offVariation": 0,
                    "fallthrough": {"variation": 0},
                    "rules": [{"id": "probe", "clauses": [clause], "variation": 1}],
                    "salt": "",
                }
    return {"flags": flags, "segments": {}}


def test_every_operator_agrees_with_official_sdk_on_every_pool_value() -> None:
    data = operator_flags()
    core_data = decode_data(data)
    disagreements = []
    with load(data) as sdk:
        for value in CONTEXT_VALUES:
            context_json = {"kind": "user", "key": "probe-user", "probe": value}
            context = decode_context(context_json)
            for key in data["flags"]:
                expected = sdk.evaluate(key, context_json)["variationIndex"]
                actual = evaluate_key(core_data, key, context).detail.variation_index
                if actual != expected:
                    clause = data["flags"][key]["rules"][0]["clauses"][0]
                    disagreements.append(
                        f"{json.dumps(value)} {clause['op']} {json.dumps(clause['values'][0])}"
                        f" negate={clause['negate']}: core {actual}, SDK {expected}"
                    )
    # A guard against the pools (and with them this test) quietly shrinking to nothing.
    assert len(data["flags"]) > 500
    assert not disagreements, "\n".join(disagreements)
