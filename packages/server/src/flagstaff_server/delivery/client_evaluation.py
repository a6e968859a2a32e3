"""Client-side results under admission control: from the evaluation cache when held, else
evaluated afresh only when the node's evaluation budget admits it (a storm of new contexts is
answered 503 + Retry-After) and within the CPU one request may use (else 413), charged either way.
"""

from __future__ import annotations

from flagstaff_core import Availability, Stopped

from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.client_context import ClientContext
from flagstaff_server.delivery.evaluation_cache import (
    Evaluated,
    EvaluationCache,
    etag_of,
    view_name,
)
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.errors import ContentTooLarge, StoreUnavailable


def admitted_results(
    admission: Admission,
    cache: EvaluationCache,
    snapshot: Snapshot,
    client: ClientContext,
    availability: Availability,
    with_reasons: bool,
) -> Evaluated:
    """Results from the cache, or evaluated afresh if the evaluation budget allows: a storm
    of new contexts is answered 503 + Retry-After instead of taking the node's CPU."""
    view = view_name(availability, with_reasons)
    held = cache.held(etag_of(snapshot.digest, view, client.fingerprint))
    if held is not None:
        return held
    if not admission.admit_evaluation():
        raise StoreUnavailable("too many new contexts to evaluate right now; retry later")
    started = admission.cpu_clock()
    try:
        return cache.client_results(
            snapshot,
            client,
            availability,
            with_reasons=with_reasons,
            keep_going=admission.evaluation_budget(),
        )
    except Stopped as exc:
        raise too_costly(admission) from exc
    finally:
        admission.charge_evaluation(admission.cpu_clock() - started)


def too_costly(admission: Admission) -> ContentTooLarge:
    """The 413 for a context whose evaluation ran past one request's CPU budget (counted)."""
    admission.counts["client_evaluation_too_costly"] += 1
    budget_ms = admission.limits.evaluation_cpu_seconds * 1000
    return ContentTooLarge(
        f"evaluating every flag for this context takes more than {budget_ms:g} ms of CPU, the"
        " most one request may use: send a smaller context (fewer array items, shorter strings)",
        path="context",
    )
