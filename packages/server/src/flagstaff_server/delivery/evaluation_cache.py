"""Evaluation for client-side delivery: each environment's snapshot decoded and compiled once
(`FlagData`, replaced when the snapshot is), and a bounded LRU of evaluated response bodies keyed by
ETag, so equal contexts are evaluated once per snapshot. Event loop only; no I/O, no clock.

The ETag is derived from the snapshot digest, the client's view and the context fingerprint, so a
conditional request is answered 304 without evaluating anything.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from flagstaff_core import Availability, DecodeError, FlagData, decode_data, evaluate_for_client

from flagstaff_server.delivery.client_context import ClientContext
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.errors import StoreUnavailable

log = logging.getLogger(__name__)

DEFAULT_CAPACITY = 4096
"""Bodies kept: at ~50 flags a body is a few kB, so this stays around 10-20 MB."""


@dataclass(frozen=True, slots=True)
class Evaluated:
    etag: bytes
    body: bytes
    """The evalx JSON map (protocol §2.3): also the data of a stream's `put`."""


def etag_of(digest: str, view: str, fingerprint: bytes) -> bytes:
    """A strong ETag for one context's results on one snapshot; `view` names the flag subset
    and response shape (e.g. "client-side+reasons", "ofrep:mobile")."""
    hasher = hashlib.blake2b(digest_size=12)
    hasher.update(digest.encode())
    hasher.update(b"\0" + view.encode() + b"\0")
    hasher.update(fingerprint)
    return b'"' + hasher.hexdigest().encode() + b'"'


def view_name(availability: Availability, with_reasons: bool) -> str:
    return availability.value + ("+reasons" if with_reasons else "")


class EvaluationCache:
    def __init__(self, *, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.counts: Counter[str] = Counter()
        self._compiled: dict[tuple[str, str], tuple[Snapshot, FlagData]] = {}
        self._bodies: OrderedDict[bytes, bytes] = OrderedDict()

    def data(self, snapshot: Snapshot) -> FlagData:
        """The snapshot's flags and segments compiled by the evaluation core, once per snapshot."""
        env_id = (snapshot.project, snapshot.environment)
        held = self._compiled.get(env_id)
        if held is not None and held[0] is snapshot:
            return held[1]
        try:
            data = decode_data(snapshot.decoded())
        except DecodeError as exc:
            # Items are checked one by one when they arrive; a whole set that still fails to
            # decode is a bug, and serving no flags would look like every flag was deleted.
            log.error("cannot compile %s/%s: %s", snapshot.project, snapshot.environment, exc)
            raise StoreUnavailable("this environment's flag data cannot be evaluated") from exc
        self._compiled[env_id] = (snapshot, data)
        self.counts["compile"] += 1
        return data

    def forget(self, project: str, environment: str) -> None:
        self._compiled.pop((project, environment), None)

    def held(self, etag: bytes) -> Evaluated | None:
        """The body already evaluated under `etag`, if the cache still has it (no evaluation)."""
        body = self._bodies.get(etag)
        if body is None:
            return None
        self._bodies.move_to_end(etag)
        self.counts["hit"] += 1
        return Evaluated(etag, body)

    def client_results(
        self,
        snapshot: Snapshot,
        client: ClientContext,
        availability: Availability,
        *,
        with_reasons: bool,
        keep_going: Callable[[], bool] | None = None,
    ) -> Evaluated:
        """Every flag `availability` allows, evaluated for `client` on `snapshot`; `keep_going`
        bounds the work (`flagstaff_core.Stopped` when it says stop: nothing is cached)."""
        etag = etag_of(snapshot.digest, view_name(availability, with_reasons), client.fingerprint)
        held = self.held(etag)
        if held is not None:
            return held
        results = evaluate_for_client(
            self.data(snapshot),
            client.context,
            availability=availability,
            with_reasons=with_reasons,
            keep_going=keep_going,
        )
        body = orjson.dumps(results)
        self.counts["evaluate"] += 1
        self._bodies[etag] = body
        if len(self._bodies) > self.capacity:
            self._bodies.popitem(last=False)
        return Evaluated(etag, body)
