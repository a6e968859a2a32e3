"""Compiles a clause into a small closure specialised by operator and attribute shape.

Clause values are prepared once (RE2 patterns compiled, semvers and instants parsed, sets
built); the closure only reads the context. Must not decide anything about rules or flags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from flagstaff_core.attribute import parse_attribute
from flagstaff_core.context import DEFAULT_KIND
from flagstaff_core.pattern import compile_search
from flagstaff_core.scope import MalformedFlagError
from flagstaff_core.semver import parse_semver, parse_semver_text
from flagstaff_core.timestamp import parse_instant

if TYPE_CHECKING:
    from flagstaff_core.context import Context
    from flagstaff_core.model import Clause
    from flagstaff_core.scope import Scope

Test = Callable[[Any], bool]
Matcher = Callable[["Context", "Scope | None"], bool]


def _never(value: Any) -> bool:
    return False


def _is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


def compile_test(op: str, values: Sequence[Any]) -> Test:
    """A predicate on one context value: true when it matches any clause value under `op`."""
    builder = _TESTS.get(op)
    return _never if builder is None else builder(values)


def _in_test(values: Sequence[Any]) -> Test:
    # Type-strict JSON equality: bool never equals a number, 1 == 1.0, strings exactly.
    # Objects, arrays and null never match.
    strings = frozenset(v for v in values if type(v) is str)
    numbers = frozenset(v for v in values if _is_number(v))
    booleans = frozenset(v for v in values if type(v) is bool)
    if not numbers and not booleans:
        if not strings:
            return _never
        if len(strings) == 1:
            (only,) = strings
            return lambda v: type(v) is str and v == only
        return lambda v: type(v) is str and v in strings

    def test(value: Any) -> bool:
        kind = type(value)
        if kind is str:
            return value in strings
        if kind is bool:
            return value in booleans
        if kind is int or kind is float:
            return value in numbers
        return False

    return test


def _strings(values: Sequence[Any]) -> tuple[str, ...]:
    return tuple(v for v in values if type(v) is str)


def _starts_with_test(values: Sequence[Any]) -> Test:
    prefixes = _strings(values)
    if not prefixes:
        return _never
    return lambda v: type(v) is str and v.startswith(prefixes)


def _ends_with_test(values: Sequence[Any]) -> Test:
    suffixes = _strings(values)
    if not suffixes:
        return _never
    return lambda v: type(v) is str and v.endswith(suffixes)


def _contains_test(values: Sequence[Any]) -> Test:
    parts = _strings(values)
    if not parts:
        return _never
    if len(parts) == 1:
        (only,) = parts
        return lambda v: type(v) is str and only in v

    def test(value: Any) -> bool:
        if type(value) is not str:
            return False
        for part in parts:  # noqa: SIM110 - a loop avoids building a generator per call
            if part in value:
                return True
        return False

    return test


def _matches_test(values: Sequence[Any]) -> Test:
    search = compile_search(_strings(values))
    if search is None:
        return _never  # no valid pattern: never matches
    return lambda v: type(v) is str and search(v)


def _numbers(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values if _is_number(v)]


# "a < any b" is "a < max(b)", so each comparison keeps one bound.
def _less_than_test(values: Sequence[Any]) -> Test:
    numbers = _numbers(values)
    if not numbers:
        return _never
    bound = max(numbers)
    return lambda v: _is_number(v) and float(v) < bound


def _less_than_or_equal_test(values: Sequence[Any]) -> Test:
    numbers = _numbers(values)
    if not numbers:
        return _never
    bound = max(numbers)
    return lambda v: _is_number(v) and float(v) <= bound


def _greater_than_test(values: Sequence[Any]) -> Test:
    numbers = _numbers(values)
    if not numbers:
        return _never
    bound = min(numbers)
    return lambda v: _is_number(v) and float(v) > bound


def _greater_than_or_equal_test(values: Sequence[Any]) -> Test:
    numbers = _numbers(values)
    if not numbers:
        return _never
    bound = min(numbers)
    return lambda v: _is_number(v) and float(v) >= bound


def _ordered_test(parse: Callable[[Any], Any], values: Sequence[Any], *, below: bool) -> Test:
    """Strictly below the largest (or above the smallest) clause value that parses: the same as
    "matches any clause value". Values that do not parse, on either side, never match."""
    bounds = [parsed for parsed in map(parse, values) if parsed is not None]
    if not bounds:
        return _never
    if below:
        upper = max(bounds)

        def is_below(value: Any) -> bool:
            parsed = parse(value)
            return parsed is not None and parsed < upper

        return is_below
    lower = min(bounds)

    def is_above(value: Any) -> bool:
        parsed = parse(value)
        return parsed is not None and parsed > lower

    return is_above


def _semver_equal_test(values: Sequence[Any]) -> Test:
    versions = frozenset(v for v in map(parse_semver, values) if v is not None)
    if not versions:
        return _never
    return lambda v: parse_semver(v) in versions


_TESTS: dict[str, Callable[[Sequence[Any]], Test]] = {
    "in": _in_test,
    "startsWith": _starts_with_test,
    "endsWith": _ends_with_test,
    "contains": _contains_test,
    "matches": _matches_test,
    "lessThan": _less_than_test,
    "lessThanOrEqual": _less_than_or_equal_test,
    "greaterThan": _greater_than_test,
    "greaterThanOrEqual": _greater_than_or_equal_test,
    "before": partial(_ordered_test, parse_instant, below=True),
    "after": partial(_ordered_test, parse_instant, below=False),
    "semVerEqual": _semver_equal_test,
    "semVerLessThan": partial(_ordered_test, parse_semver, below=True),
    "semVerGreaterThan": partial(_ordered_test, parse_semver, below=False),
}


def compile_clause(clause: Clause) -> Matcher:
    """A closure telling whether a context satisfies `clause` (segmentMatch excluded)."""
    negate = clause.negate
    test = compile_test(clause.op, clause.values)
    path = parse_attribute(clause.attribute, clause.context_kind)
    kind = clause.context_kind or DEFAULT_KIND
    if path == ("kind",):

        def match_kind(context: Context, scope: Scope | None) -> bool:
            for each in context.kinds:
                if test(each):
                    return not negate
            return negate

        return match_kind
    if path is None:

        def malformed(context: Context, scope: Scope | None) -> bool:
            # LaunchDarkly reports a bad reference only when the context has the clause's kind.
            if kind in context._attributes_by_kind:
                raise MalformedFlagError(f"invalid attribute reference {clause.attribute!r}")
            return False

        return malformed
    if len(path) == 1:
        (name,) = path
        fast = _string_fast_path(clause.op, clause.values, kind, name, negate, test)
        if fast is not None:
            return fast

        def match_attribute(context: Context, scope: Scope | None) -> bool:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return False
            value = attributes.get(name)
            if value is None:
                return False
            value_kind = type(value)
            if value_kind is list or value_kind is tuple:
                for item in value:
                    if test(item):
                        return not negate
                return negate
            return test(value) is not negate

        return match_attribute

    first, rest = path[0], path[1:]

    def match_path(context: Context, scope: Scope | None) -> bool:
        attributes = context._attributes_by_kind.get(kind)
        if attributes is None:
            return False
        value = attributes.get(first)
        for component in rest:
            if type(value) is not dict:
                return False
            value = value.get(component)
        if value is None:
            return False
        value_kind = type(value)
        if value_kind is list or value_kind is tuple:
            for item in value:
                if test(item):
                    return not negate
            return negate
        return test(value) is not negate

    return match_path


def _string_fast_path(
    op: str, values: Sequence[Any], kind: str, name: str, negate: bool, test: Test
) -> Matcher | None:
    """For the commonest clauses on a top-level attribute (`in` strings, `startsWith`, `endsWith`,
    `matches`, semver order) a closure that tests a string value inline, saving a call per clause;
    other value types take the general path through `test`."""
    strings = _strings(values)
    if len(strings) != len(values) or not strings:
        return None

    def other(value: Any) -> bool:
        if value is None:
            return False
        if type(value) is list or type(value) is tuple:
            for item in value:
                if test(item):
                    return not negate
            return negate
        return test(value) is not negate

    if op == "in":
        members = frozenset(strings)

        def match_in(context: Context, scope: Scope | None) -> bool:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return False
            value = attributes.get(name)
            if type(value) is str:
                return (value in members) is not negate
            return other(value)

        return match_in
    if op == "startsWith":

        def match_prefix(context: Context, scope: Scope | None) -> bool:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return False
            value = attributes.get(name)
            if type(value) is str:
                return value.startswith(strings) is not negate
            return other(value)

        return match_prefix
    if op == "endsWith":

        def match_suffix(context: Context, scope: Scope | None) -> bool:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return False
            value = attributes.get(name)
            if type(value) is str:
                return value.endswith(strings) is not negate
            return other(value)

        return match_suffix
    if op == "matches":
        search = compile_search(strings)
        if search is None:
            return None

        def match_regex(context: Context, scope: Scope | None) -> bool:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return False
            value = attributes.get(name)
            if type(value) is str:
                return search(value) is not negate
            return other(value)

        return match_regex
    if op in ("semVerLessThan", "semVerGreaterThan"):
        versions = [v for v in map(parse_semver_text, strings) if v is not None]
        if not versions:
            return None
        less = op == "semVerLessThan"
        bound = max(versions) if less else min(versions)

        def match_version(context: Context, scope: Scope | None) -> bool:
            attributes = context._attributes_by_kind.get(kind)
            if attributes is None:
                return False
            value = attributes.get(name)
            if type(value) is str:
                version = parse_semver_text(value)
                if version is None:
                    return negate
                return (version < bound if less else version > bound) is not negate
            return other(value)

        return match_version
    return None


def compile_clauses(matchers: Sequence[Matcher]) -> Matcher:
    """One closure that is true when every matcher is (an empty list always matches)."""
    if not matchers:
        return lambda context, scope: True
    if len(matchers) == 1:
        return matchers[0]
    if len(matchers) == 2:
        first, second = matchers
        return lambda context, scope: first(context, scope) and second(context, scope)
    every = tuple(matchers)

    def match_all(context: Context, scope: Scope | None) -> bool:
        for matcher in every:  # noqa: SIM110 - a loop avoids building a generator per call
            if not matcher(context, scope):
                return False
        return True

    return match_all
