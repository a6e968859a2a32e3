"""What the benchmark needs from an evaluator (the `Runner` protocol) and Flagstaff's core runner.

A runner loads the shared data once, then prepares each case: contexts pre-built in its own type
and one call to time. It never times anything itself; `timing` does that the same way for all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from bench.eval.case import Case, Json


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """An evaluation result in comparable form: LaunchDarkly's value, index and reason JSON."""

    value: Any
    variation_index: int | None
    reason: Json


@dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """One case ready to time: `call(context)` is the measured call, for each of `contexts`."""

    call: Callable[[Any], object]
    contexts: tuple[object, ...]
    answer: Callable[[object], Answer]


class Runner(Protocol):
    """An evaluator under test. Flagstaff's Python SDK (its public `variation`) joins later as
    another `side = "flagstaff"` runner in the list built by `bench.eval.__main__.main`."""

    @property
    def label(self) -> str: ...

    @property
    def side(self) -> str:
        """ "flagstaff" for ours, "peer" for the implementation we compare against."""
        ...

    def prepare(self, case: Case) -> Prepared: ...

    def close(self) -> None: ...


class CoreRunner:
    """Flagstaff's core: `flagstaff_core.evaluate(flag, context, data)`, flag fetched beforehand."""

    label = "flagstaff core evaluate"
    side = "flagstaff"

    def __init__(self, data: Json) -> None:
        import flagstaff_core

        self._core = flagstaff_core
        self._data = flagstaff_core.decode_data(data)

    def prepare(self, case: Case) -> Prepared:
        flag = self._data.flag(case.flag_key)
        if flag is None:
            raise LookupError(f"flag {case.flag_key!r} missing after decoding")
        contexts = tuple(self._core.decode_context(json) for json in case.contexts)
        return Prepared(
            call=partial(self._core.evaluate, flag, data=self._data),
            contexts=contexts,
            answer=_answer_from_core,
        )

    def close(self) -> None:
        pass


def _answer_from_core(result: Any) -> Answer:
    detail = result.detail
    return Answer(
        value=detail.value,
        variation_index=detail.variation_index,
        reason=detail.reason.to_json(),
    )
