"""Which flags a change affects: the changed flags plus every flag that reaches a changed flag
or segment through prerequisites or `segmentMatch` clauses (transitively). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from flagstaff_core import Clause, FlagData


def _segment_refs(clauses: Iterable[Clause]) -> set[str]:
    return {
        str(value)
        for clause in clauses
        if clause.op == "segmentMatch"
        for value in clause.values
        if isinstance(value, str)
    }


def affected_flags(
    datas: Iterable[FlagData], changed_flags: Iterable[str], changed_segments: Iterable[str]
) -> set[str]:
    """Flag keys whose evaluation may differ, judged on the dependencies in every `datas`
    (pass the data before and after the change: a dependency may have been added or removed)."""
    # dependents[("flag"|"segment", key)] = the items that refer to it
    dependents: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for data in datas:
        for flag in data.flags.values():
            me = ("flag", flag.key)
            for prerequisite in flag.prerequisites:
                dependents.setdefault(("flag", prerequisite.key), set()).add(me)
            for rule in flag.rules:
                for segment_key in _segment_refs(rule.clauses):
                    dependents.setdefault(("segment", segment_key), set()).add(me)
        for segment in data.segments.values():
            me = ("segment", segment.key)
            for segment_rule in segment.rules:
                for segment_key in _segment_refs(segment_rule.clauses):
                    dependents.setdefault(("segment", segment_key), set()).add(me)
    pending = [("flag", key) for key in changed_flags]
    pending.extend(("segment", key) for key in changed_segments)
    seen = set(pending)
    while pending:
        item = pending.pop()
        for dependent in dependents.get(item, ()):
            if dependent not in seen:
                seen.add(dependent)
                pending.append(dependent)
    return {key for kind, key in seen if kind == "flag"}
