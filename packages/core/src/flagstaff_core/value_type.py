"""Typed evaluation for strongly-typed callers: a value of the wrong type becomes WRONG_TYPE."""

from __future__ import annotations

import enum
from typing import Any

from flagstaff_core.reason import ErrorKind, EvaluationDetail, Reason


class ValueType(enum.Enum):
    BOOL = "bool"
    INT = "int"
    DOUBLE = "double"
    STRING = "string"
    ANY = "any"


def has_value_type(value: Any, value_type: ValueType) -> bool:
    """Whether a flag value may be returned by a variation method of `value_type`."""
    kind = type(value)
    if value_type is ValueType.BOOL:
        return kind is bool
    if value_type is ValueType.INT or value_type is ValueType.DOUBLE:
        return kind is int or kind is float
    if value_type is ValueType.STRING:
        return kind is str
    return True


_WRONG_TYPE = Reason.error(ErrorKind.WRONG_TYPE)


def typed_detail(detail: EvaluationDetail, value_type: ValueType, default: Any) -> EvaluationDetail:
    """`detail` with the default substituted, or WRONG_TYPE when the value has another type."""
    if detail.value is None:
        return EvaluationDetail(default, detail.variation_index, detail.reason)
    if not has_value_type(detail.value, value_type):
        return EvaluationDetail(default, None, _WRONG_TYPE)
    return detail
