"""Every input the long fuzzing pass (`python -m fuzz`, docs/fuzzing.md) found, replayed through
the same oracle: each failed on the code of its day and must keep passing."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import pytest
from fuzz import asgi, decoders
from fuzz.asgi import JSON, Request
from fuzz.inputs import nested


@pytest.fixture(scope="module", autouse=True)
def running_server() -> Iterator[None]:
    yield
    asgi.close()


@pytest.mark.parametrize(
    ("path", "body", "headers"),
    [
        ("/bulk", b'[{"kind":', JSON),  # found by http-events: "Input data was truncated"
        ("/mobile", b'[{"kind":"custom"}] trailing', JSON),
        ("/diagnostic", b'{"kind":"diagnostic","id":"\xff"}', JSON),
        ("/bulk", gzip.compress(b"[]", mtime=0)[:-3], {**JSON, "Content-Encoding": "gzip"}),
        ("/bulk", b"not gzip", {**JSON, "Content-Encoding": "gzip"}),
    ],
    ids=["truncated-json", "trailing-text", "invalid-utf8", "truncated-gzip", "not-gzip"],
)
def test_an_event_body_refused_as_a_whole_names_the_whole_body(
    path: str, body: bytes, headers: dict[str, str]
) -> None:
    """A body that is not JSON (or not gzip) was a 400 whose problem JSON named no field; it
    names the empty pointer, as the management API does for a body that is not JSON."""
    credential = "mobile" if path.startswith("/mobile") else "sdk"
    request = Request("POST", path, body, headers, credential)
    answer = asgi.server().send(request)
    assert answer.status_code == 400
    assert answer.json()["path"] == ""
    asgi.check_request(request)


def test_a_flag_body_deeper_than_python_recurses_is_refused_at_the_edge() -> None:
    """The first pure-level finding: a variation value 1,200 deep, as a Python object, was a
    RecursionError in `document.clone`. No request can carry it (the API's screening refuses
    a body nested past 80 levels before any route parses it), so the pure targets now feed
    documents through that screening; the body is refused naming the field."""
    body = {"key": "deep", "name": "Deep", "variations": [{"value": nested(1_200)}, {"value": 1}]}
    decoders.check_body(decoders.FLAG)(body)
    answer = asgi.server().send(
        Request("POST", "/api/v2/flags/demo", b'{"key":"deep","name":"Deep","variations":'
                b'[{"value":' + b"[" * 1_200 + b"]" * 1_200 + b'},{"value":1}]}', JSON)
    )  # fmt: skip
    assert (answer.status_code, answer.json()["path"]) == (400, "")
