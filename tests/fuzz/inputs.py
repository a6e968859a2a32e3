"""Hypothesis strategies for hostile input to the public decoders: arbitrary JSON (deep, wide,
odd numbers and strings), raw bytes, and structure-aware mutations of valid seeds (a flag body,
a context, an event payload, a patch), so generated input gets past the first type check and
reaches the code behind it. Only generates data; asserts nothing.
"""

from __future__ import annotations

import base64
import copy
import gzip
from typing import Any

import orjson
from hypothesis import strategies as st

Json = Any

NAMES = (
    "key", "kind", "name", "value", "values", "variations", "rules", "clauses", "op", "path",
    "from", "attribute", "contextKind", "_meta", "privateAttributes", "anonymous", "custom",
    "instructions", "environmentKey", "variationId", "ruleId", "clauseId", "targets", "context",
    "targetingKey", "data", "features", "counters", "creationDate", "multi", "user", "org", "",
    "/", "~", "-", "0", "__proto__", "\u0000", "\ud7ff", "é",
)  # fmt: skip
ODD_STRINGS = (
    "", " ", "-", "0", "~1", "~0", "/", "//", "/-", "/0", "a/b", "%2F", "\\", "\u2028", "\ufeff",
    "é" * 3, "\U0001f600", "user", "multi", "kind", "*", ".*", "(a+)+$", "[", "1.2.3", "1e309",
    "2021-01-01T00:00:00Z", "9" * 30, "x" * 300,
)  # fmt: skip
ODD_INTS = (0, -1, 1, 2, 99_999, 100_000, 100_001, 2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**30)

names = st.one_of(st.sampled_from(NAMES), st.text(max_size=12))
strings = st.one_of(st.sampled_from(ODD_STRINGS), st.text(max_size=40))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(ODD_INTS),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
)
json_values: st.SearchStrategy[Json] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(names, inner, max_size=6)),
    max_leaves=40,
)


def nested(depth: int, leaf: Json = 1, *, in_list: bool = False) -> Json:
    value = leaf
    for _ in range(depth):
        value = [value] if in_list else {"d": value}
    return value


deep_values = st.builds(
    nested, st.integers(min_value=50, max_value=1_200), json_values, in_list=st.booleans()
)
wide_values = st.builds(lambda n, v: [v] * n, st.integers(min_value=200, max_value=5_000), scalars)
any_values = st.one_of(json_values, json_values, json_values, deep_values, wide_values)


@st.composite
def mutated(draw: st.DrawFn, seed: Json, *, max_steps: int = 4) -> Json:
    """`seed` with up to `max_steps` edits at random places: a value replaced (by anything,
    deep and wide values included), a member or item removed, or one added."""
    document = copy.deepcopy(seed)
    for _ in range(draw(st.integers(min_value=0, max_value=max_steps))):
        document = _edit(draw, document)
    return document


def _edit(draw: st.DrawFn, document: Json) -> Json:
    places = list(_places(document))
    parent, slot = places[draw(st.integers(min_value=0, max_value=len(places) - 1))]
    action = draw(st.sampled_from(("replace", "replace", "remove", "add")))
    if parent is None:
        return draw(any_values) if action == "replace" else document
    if action == "replace":
        parent[slot] = draw(any_values)
    elif action == "remove":
        del parent[slot]
    elif isinstance(parent, dict):
        parent[draw(names)] = draw(any_values)
    else:
        parent.insert(draw(st.integers(min_value=0, max_value=len(parent))), draw(any_values))
    return document


def _places(document: Json) -> list[tuple[Any, Any]]:
    """(container, member) for every value inside `document`, and (None, None) for itself."""
    found: list[tuple[Any, Any]] = [(None, None)]
    stack = [document]
    while stack and len(found) < 500:
        node = stack.pop()
        if not isinstance(node, dict | list):
            continue
        members = node.items() if isinstance(node, dict) else enumerate(node)
        for slot, child in list(members):
            found.append((node, slot))
            stack.append(child)
    return found


def from_seeds(*seeds: Json) -> st.SearchStrategy[Json]:
    """Mutations of the seeds, with plain arbitrary values now and then."""
    return st.one_of(*(mutated(seed) for seed in seeds), any_values)


def encoded(values: st.SearchStrategy[Json]) -> st.SearchStrategy[bytes]:
    """The values as JSON bytes, and raw or damaged bytes: cut short, a byte flipped, invalid
    UTF-8, NaN, duplicate members."""
    as_json = values.map(_dumps)
    damaged = st.tuples(as_json, st.integers(min_value=0), st.binary(max_size=4)).map(_damage)
    odd = st.sampled_from(
        (
            b"",
            b"null",
            b"NaN",
            b'[{"kind":"x","kind":1}]',
            b"[" * 2_000,
            b'"\xff"',
            b"\xef\xbb\xbf[]",
        )
    )
    return st.one_of(as_json, as_json, damaged, odd, st.binary(max_size=64))


def _dumps(value: Json) -> bytes:
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):  # deeper than orjson writes: fall back to text
        return repr(value).replace("'", '"').replace("None", "null").encode("utf-8", "replace")


def _damage(parts: tuple[bytes, int, bytes]) -> bytes:
    data, at, junk = parts
    if not data:
        return junk
    at %= len(data)
    return data[:at] + junk + data[at + len(junk) :]


def base64url(data: bytes, *, padded: bool) -> str:
    text = base64.urlsafe_b64encode(data).decode()
    return text if padded else text.rstrip("=")


def path_segments(values: st.SearchStrategy[Json]) -> st.SearchStrategy[str]:
    """A context as a client-side SDK puts it in a path (base64url, padded or not, either
    alphabet) and broken ones (not base64, wrong padding, spaces, huge)."""
    good = st.tuples(encoded(values), st.booleans()).map(lambda p: base64url(p[0], padded=p[1]))
    standard = encoded(values).map(lambda data: base64.b64encode(data).decode())
    broken = st.one_of(
        st.text(max_size=40),
        st.sampled_from(
            ("", "=", "====", "a", "ab=", "%00", "..", "e30", "e30=", "e30==", " e30 ")
        ),
        st.integers(min_value=0, max_value=60_000).map(lambda n: "e" * n),
    )
    # httpx sends no URL over 64 KiB: past it the client, not the server, would refuse
    return st.one_of(good, good, standard, broken).filter(lambda segment: len(segment) < 60_000)


def gzipped(bodies: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    bomb = st.integers(min_value=1, max_value=8).map(lambda mb: gzip.compress(b"[" * (mb << 20)))
    cut = bodies.map(lambda body: gzip.compress(body)[:-3])
    return st.one_of(bodies.map(gzip.compress), bomb, cut, bodies)
