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
    """One case ready to time: `call(context)` is the measured call, for each of `contexts`.

    `answer` turns a result into an `Answer`. A call that returns a bare value (a public
    `variation`) names `detail`, the same client's detail call, for the agreement check, and
    `answer` then maps `call`'s value for comparison with the detail's. `settle`, when given, is
    timed with every repeat: it waits until the work the calls left to background threads (event
    summarising, a flush) is done, so that work counts against the evaluations.
    """

    call: Callable[[Any], object]
    contexts: tuple[object, ...]
    answer: Callable[[object], Answer]
    detail: Callable[[Any], object] | None = None
    settle: Callable[[], None] | None = None


class Runner(Protocol):
    """An evaluator under test, in the list built by `bench.eval.__main__.main`. Ratios compare
    runners of the same `group` ("evaluator", "events off", "events on") across sides."""

    @property
    def label(self) -> str: ...

    @property
    def group(self) -> str: ...

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
    group = "evaluator"

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
