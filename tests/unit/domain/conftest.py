"""Fixtures for the domain tests: a deterministic id factory and ready-made flag documents."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from flagstaff_server.domain import IdFactory, new_flag_document

NOW = 1_700_000_000_000
ENVIRONMENTS = [("production", "Production"), ("test", "Test")]


@pytest.fixture
def new_id() -> IdFactory:
    counter = itertools.count(1)
    return lambda: f"id-{next(counter)}"


@pytest.fixture
def make_flag(new_id: IdFactory) -> Callable[..., dict[str, Any]]:
    def make(**body: Any) -> dict[str, Any]:
        body.setdefault("key", "flag-a")
        body.setdefault("name", "Flag A")
        return new_flag_document(body, ENVIRONMENTS, now_ms=NOW, new_id=new_id)

    return make


@pytest.fixture
def flag(make_flag: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """A three-variation flag with a rule and targets in production."""
    document = make_flag(
        variations=[{"value": "red"}, {"value": "green"}, {"value": "blue"}],
        defaults={"onVariation": 1, "offVariation": 0},
    )
    production = document["environments"]["production"]
    production["on"] = True
    production["targets"] = [{"values": ["u1", "u2"], "variation": 2}]
    production["contextTargets"] = [
        {"contextKind": "user", "values": [], "variation": 2},
        {"contextKind": "org", "values": ["o1"], "variation": 0},
    ]
    production["rules"] = [
        {
            "_id": "rule-1",
            "clauses": [
                {
                    "_id": "clause-1",
                    "contextKind": "user",
                    "attribute": "country",
                    "op": "in",
                    "values": ["se", "no"],
                    "negate": False,
                }
            ],
            "variation": 2,
            "trackEvents": False,
        }
    ]
    return document
