"""Fuzz targets at the level of the pure decoders: each `check_*` takes one generated input, runs
the decoder (and what consumes its result: evaluation of the demo flags, processing of accepted
events, validation of an edited document) and fails on anything but the decoder's own refusal.
A refusal of bad input must name the field (a JSON pointer). `TARGETS` pairs each with its
inputs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from flagstaff_core import CoreError, FlagData, decode_context, decode_data, evaluate
from flagstaff_server.delivery.client_context import decode_base64_json, parse_json, read_context
from flagstaff_server.delivery.ofrep import Failure, context_of
from flagstaff_server.domain.flag_creation import new_flag_document
from flagstaff_server.domain.flag_instruction import apply_semantic_patch
from flagstaff_server.domain.flag_patch import apply_flag_json_patch, apply_flag_merge_patch
from flagstaff_server.domain.flag_validation import validate_flag_document
from flagstaff_server.domain.instruction import SemanticPatch, parse_semantic_patch_body
from flagstaff_server.domain.json_patch import parse_patch_body
from flagstaff_server.domain.segment import (
    apply_segment_json_patch,
    apply_segment_merge_patch,
    new_segment_document,
)
from flagstaff_server.domain.segment_instruction import apply_segment_semantic_patch
from flagstaff_server.domain.segment_validation import validate_segment_document
from flagstaff_server.errors import InvalidInput
from flagstaff_server.http.api.content import refuse_deep_body, refuse_nul_in_body
from flagstaff_server.ingest.body import BodyError, check_events, gunzip
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.tally import tally
from hypothesis import strategies as st

from fuzz import seeds
from fuzz.inputs import Json, encoded, from_seeds, gzipped, path_segments

NOW_MS = 1_700_000_000_000
BODY_LIMIT = 1 << 20
ENVIRONMENTS = (("production", "Production"), ("test", "Test"))


def new_id() -> str:
    return "00000000-0000-4000-8000-000000000000"


def refused(exc: InvalidInput) -> None:
    """A refusal of bad input: it must say where (the field's JSON pointer, "" for the whole)."""
    assert exc.path is not None, f"{type(exc).__name__} names no field: {exc.message}"


@functools.cache
def demo_data() -> FlagData:
    return decode_data(seeds.demo_data_file())


def evaluate_everything(context: Any) -> None:
    data = demo_data()
    for flag in data.flags.values():
        evaluate(flag, context, data)


def check_context_path(segment: str) -> None:
    try:
        decoded = read_context(decode_base64_json(segment))
    except InvalidInput as exc:
        refused(exc)
        return
    evaluate_everything(decoded.context)


def check_context_body(body: bytes) -> None:
    try:
        decoded = read_context(parse_json(body, "context"))
    except InvalidInput as exc:
        refused(exc)
        return
    evaluate_everything(decoded.context)


def check_ofrep_body(body: bytes) -> None:
    try:
        request = parse_json(body, "body")
    except InvalidInput as exc:
        refused(exc)
        return
    decoded = context_of(request)
    if not isinstance(decoded, Failure):
        evaluate_everything(decoded.context)


def check_event_body(given: tuple[bytes, bool, bool]) -> None:
    body, diagnostic, compressed = given
    try:
        data = gunzip(body, BODY_LIMIT) if compressed else body
        check_events(data, diagnostic=diagnostic)
    except BodyError as exc:
        if exc.status not in (400, 413):
            raise AssertionError(f"an event body refused with {exc.status}") from exc
        return
    kind = Kind.DIAGNOSTIC if diagnostic else Kind.ANALYTICS
    record = Record(
        seq=1, received_ms=NOW_MS, kind=kind, project="p", environment="e", payload_id="x",
        payload=data,
    )  # fmt: skip
    tally([record])


def check_sdk_data(data: Json) -> None:
    """A LaunchDarkly data file (import, a data-file SDK source, what delivery decodes)."""
    try:
        decoded = decode_data(data)
    except CoreError:
        return
    for context in seeds.CONTEXTS:
        parsed = decode_context(context)
        for flag in decoded.flags.values():
            evaluate(flag, parsed, decoded)


def as_received(body: Json) -> Json:
    """`body` as a management API route receives it: through JSON text and the screening every
    request gets (`content.screen_request`: nesting and NUL), which raises `InvalidInput`."""
    try:
        raw = orjson.dumps(body)
    except (orjson.JSONEncodeError, TypeError):  # no JSON text is this (too deep for orjson)
        raise InvalidInput("not expressible as JSON", path="") from None
    refuse_deep_body(raw)
    refuse_nul_in_body(raw)
    return orjson.loads(raw)


def servable(document: Json) -> None:
    """A document that passed validation is storable: it encodes as JSON."""
    orjson.dumps(document)


def check_document(
    build: Callable[[Json], Json], validate: Callable[[Json], None], body: Json
) -> None:
    """`body` as a route receives it, made into a document by `build` and validated: a refusal
    must name the field, and a document that passes must be storable."""
    try:
        document = build(as_received(body))
        validate(document)
    except InvalidInput as exc:
        refused(exc)
        return
    servable(document)


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentKind:
    """How the management API creates, patches and validates one kind of document."""

    seed: Callable[[], Json]
    """The stored document patches apply to (a demo flag or segment)."""
    create: Callable[[Json], Json]
    json_patch: Callable[[Json, Any], Json]
    merge_patch: Callable[[Json, Any], Json]
    semantic_patch: Callable[[Json, SemanticPatch], Json]
    validate: Callable[[Json], None]

    def patched(self, body: Json) -> Json:
        request = parse_patch_body(body)
        if request.kind == "json":
            return self.json_patch(self.seed(), request.operations)
        return self.merge_patch(self.seed(), request.merge)

    def semantically_patched(self, body: Json) -> Json:
        return self.semantic_patch(self.seed(), parse_semantic_patch_body(body))


FLAG = DocumentKind(
    seed=lambda: seeds.demo_documents()[0],
    create=lambda body: new_flag_document(body, ENVIRONMENTS, now_ms=NOW_MS, new_id=new_id),
    json_patch=lambda flag, operations: apply_flag_json_patch(flag, operations, new_id=new_id),
    merge_patch=lambda flag, merge: apply_flag_merge_patch(flag, merge, new_id=new_id),
    semantic_patch=lambda flag, patch: (
        apply_semantic_patch(
            flag,
            patch.instructions,
            environment_key=patch.environment_key,
            now_ms=NOW_MS,
            new_id=new_id,
        ).document
    ),
    validate=validate_flag_document,
)
SEGMENT = DocumentKind(
    seed=lambda: seeds.demo_documents()[1],
    create=lambda body: new_segment_document(body, now_ms=NOW_MS, new_id=new_id),
    json_patch=lambda segment, operations: apply_segment_json_patch(
        segment, operations, new_id=new_id
    ),
    merge_patch=lambda segment, merge: apply_segment_merge_patch(segment, merge, new_id=new_id),
    semantic_patch=lambda segment, patch: (
        apply_segment_semantic_patch(
            segment, patch.instructions, now_ms=NOW_MS, new_id=new_id
        ).document
    ),
    validate=validate_segment_document,
)


def check_body(kind: DocumentKind) -> Callable[[Json], None]:
    return functools.partial(check_document, kind.create, kind.validate)


def check_patch(kind: DocumentKind) -> Callable[[Json], None]:
    return functools.partial(check_document, kind.patched, kind.validate)


def check_semantic_patch(kind: DocumentKind) -> Callable[[Json], None]:
    return functools.partial(check_document, kind.semantically_patched, kind.validate)


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    inputs: Callable[[], st.SearchStrategy[Any]]
    """Built on first use: some seeds need the demo documents."""
    check: Callable[[Any], None]


def _events() -> st.SearchStrategy[tuple[bytes, bool, bool]]:
    analytics = encoded(from_seeds(seeds.ANALYTICS_EVENTS, seeds.ANALYTICS_EVENTS[1:2]))
    diagnostic = encoded(from_seeds(*seeds.DIAGNOSTIC_EVENTS, list(seeds.DIAGNOSTIC_EVENTS)))
    plain = st.one_of(
        st.tuples(analytics, st.just(False), st.just(False)),
        st.tuples(diagnostic, st.just(True), st.just(False)),
    )
    packed = st.one_of(
        st.tuples(gzipped(analytics), st.just(False), st.just(True)),
        st.tuples(gzipped(diagnostic), st.just(True), st.just(True)),
    )
    return st.one_of(plain, plain, packed)


def _flag_patches() -> st.SearchStrategy[Json]:
    return from_seeds(*seeds.JSON_PATCHES)


def _flag_semantic_patches() -> st.SearchStrategy[Json]:
    flag, _ = seeds.demo_documents()
    return from_seeds(*seeds.semantic_patches(flag))


def _contexts() -> st.SearchStrategy[Json]:
    return from_seeds(*seeds.CONTEXTS)


TARGETS: tuple[Target, ...] = (
    Target("context-path", lambda: path_segments(_contexts()), check_context_path),
    Target("context-body", lambda: encoded(_contexts()), check_context_body),
    Target("ofrep-body", lambda: encoded(from_seeds(seeds.OFREP_REQUEST)), check_ofrep_body),
    Target("event-body", _events, check_event_body),
    Target("sdk-data", lambda: from_seeds(seeds.demo_data_file()), check_sdk_data),
    Target("flag-body", lambda: from_seeds(seeds.FLAG_BODY), check_body(FLAG)),
    Target("segment-body", lambda: from_seeds(seeds.SEGMENT_BODY), check_body(SEGMENT)),
    Target("flag-patch", _flag_patches, check_patch(FLAG)),
    Target("segment-patch", lambda: from_seeds(*seeds.SEGMENT_JSON_PATCHES), check_patch(SEGMENT)),
    Target("flag-semantic-patch", _flag_semantic_patches, check_semantic_patch(FLAG)),
    Target(
        "segment-semantic-patch",
        lambda: from_seeds(seeds.SEGMENT_SEMANTIC_PATCH),
        check_semantic_patch(SEGMENT),
    ),
)
