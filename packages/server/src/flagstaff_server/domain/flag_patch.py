"""JSON Patch and JSON Merge Patch on a REST flag document: read-only members (key, version,
creation date, kind, an environment's bookkeeping) may be tested or copied but not changed,
environments are added and removed only by the environment API, and new rules and clauses get
ids. All or nothing; `flag_validation` checks the result.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import Document, IdFactory, pointer
from flagstaff_server.domain.flag import fill_flag_ids
from flagstaff_server.domain.json_patch import apply_json_patch, apply_merge_patch, parse_pointer
from flagstaff_server.errors import ValidationError

READ_ONLY_FIELDS = frozenset({"key", "_version", "creationDate", "kind", "environments"})
"""Top-level members a patch may test but not change (plus every member starting with '_')."""

READ_ONLY_ENVIRONMENT_FIELDS = frozenset(
    {"version", "lastModified", "salt", "sel", "_site", "_environmentName", "_summary"}
)
WRITABLE_UNDERSCORE_ENVIRONMENT_FIELDS = frozenset({"_debugEventsUntilDate"})


def apply_flag_json_patch(
    document: Document, operations: list[dict[str, Any]], *, new_id: IdFactory
) -> Document:
    """JSON Patch on a flag: read-only fields may be tested but not changed; all-or-nothing."""
    for index, operation in enumerate(operations):
        op = operation.get("op") if isinstance(operation, dict) else None
        if op == "test":
            continue
        # reading from a read-only member (copy) is fine; moving it away is not
        for member in ("path", "from") if op == "move" else ("path",):
            text = operation.get(member) if isinstance(operation, dict) else None
            if isinstance(text, str):
                _check_writable_flag_path(parse_pointer(text, at=f"/{index}/{member}"), index, text)
    patched = apply_json_patch(document, operations)
    return fill_flag_ids(_restore_flag_bookkeeping(document, patched), new_id=new_id)


def apply_flag_merge_patch(
    document: Document, merge: dict[str, Any], *, new_id: IdFactory
) -> Document:
    """JSON Merge Patch on a flag; read-only members may not appear in the patch."""
    _check_merge_writable(merge, [], READ_ONLY_FIELDS)
    environments = merge.get("environments")
    if isinstance(environments, dict):
        for env_key, config in environments.items():
            if env_key not in document.get("environments", {}) or not isinstance(config, dict):
                raise ValidationError(
                    "environments are added and removed with the environment API",
                    path=pointer("environments", env_key),
                )
            _check_merge_writable(config, ["environments", env_key], READ_ONLY_ENVIRONMENT_FIELDS)
    patched = apply_merge_patch(document, merge)
    return fill_flag_ids(_restore_flag_bookkeeping(document, patched), new_id=new_id)


def _check_merge_writable(patch: dict[str, Any], at: list[str], read_only: frozenset[str]) -> None:
    for name in patch:
        if name == "environments" and not at:
            continue
        if name in read_only or (
            name.startswith("_") and name not in WRITABLE_UNDERSCORE_ENVIRONMENT_FIELDS
        ):
            raise ValidationError(f"'{name}' is read-only", path=pointer(*at, name))


def _check_writable_flag_path(tokens: list[str], index: int, text: str) -> None:
    def refuse(reason: str) -> None:
        raise ValidationError(f"patch operation {index}: {text or '/'} {reason}", path=text)

    if not tokens:
        refuse("would replace the whole flag")
    top = tokens[0]
    if top != "environments" and (top in READ_ONLY_FIELDS or top.startswith("_")):
        refuse("is read-only")
    if top == "environments":
        if len(tokens) < 3:
            refuse("is read-only: environments are added and removed with the environment API")
        name = tokens[2]
        if name in READ_ONLY_ENVIRONMENT_FIELDS or (
            name.startswith("_") and name not in WRITABLE_UNDERSCORE_ENVIRONMENT_FIELDS
        ):
            refuse("is read-only")


def _restore_flag_bookkeeping(before: Document, after: Document) -> Document:
    for name in ("key", "_version", "creationDate"):
        if name in before:
            after[name] = before[name]
    environments = after.get("environments")
    if (
        not isinstance(environments, dict)
        or environments.keys() != before.get("environments", {}).keys()
    ):
        raise ValidationError(
            "environments are added and removed with the environment API", path="/environments"
        )
    for env_key, config in environments.items():
        if not isinstance(config, dict):
            continue
        for name in READ_ONLY_ENVIRONMENT_FIELDS:
            if name in before["environments"][env_key]:
                config[name] = before["environments"][env_key][name]
    return after
