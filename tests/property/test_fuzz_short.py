"""The fuzzing pass of `python -m fuzz` (tests/fuzz, docs/fuzzing.md) in miniature, so CI runs every
target on each change: a few dozen generated inputs per pure decoder and a dozen requests per HTTP
target, each checked by the same oracle as the long pass (no crash, no 5xx, a 4xx naming the field,
no ERROR logged, a stored change still lists, exports and serves)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fuzz import asgi, decoders
from fuzz.decoders import Target
from hypothesis import HealthCheck, given, settings

PURE_EXAMPLES = 40
HTTP_EXAMPLES = 12


def run(target: Target, examples: int) -> None:
    @given(target.inputs())
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(value: Any) -> None:
        target.check(value)

    check()


@pytest.fixture(scope="module")
def running_server() -> Iterator[None]:
    yield
    asgi.close()


@pytest.mark.parametrize("target", decoders.TARGETS, ids=lambda target: target.name)
def test_pure_decoder_refuses_hostile_input_by_naming_the_field(target: Target) -> None:
    run(target, PURE_EXAMPLES)


@pytest.mark.parametrize("target", asgi.TARGETS, ids=lambda target: target.name)
def test_http_endpoint_answers_hostile_requests_below_500(
    target: Target, running_server: None
) -> None:
    run(target, HTTP_EXAMPLES)
