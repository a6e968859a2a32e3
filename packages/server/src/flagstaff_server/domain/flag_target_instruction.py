"""Semantic patch for flags, the individual targets family. User keys live in `targets`; other
kinds in `contextTargets`, where a user entry with no values marks where the user targets of that
variation are checked (protocol §3.4); a key is targeted by at most one variation per kind.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import is_valid_context_kind
from flagstaff_server.domain.flag_edit import USER, FlagEdit, FlagHandler
from flagstaff_server.domain.instruction import Instruction
from flagstaff_server.errors import ValidationError


def _target_lists(config: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    if kind == USER:
        targets: list[dict[str, Any]] = config["targets"]
        return targets
    return [t for t in config["contextTargets"] if t.get("contextKind") == kind]


def _context_kind(instruction: Instruction) -> str:
    kind = instruction.optional_string("contextKind") or USER
    if not is_valid_context_kind(kind):
        raise instruction.error(f"invalid context kind {kind!r}", "contextKind")
    return kind


def _add_target_values(
    config: dict[str, Any], kind: str, variation: int, values: list[str], instruction: Instruction
) -> None:
    targeted = {
        key: target["variation"]
        for target in _target_lists(config, kind)
        if target.get("variation") != variation
        for key in target.get("values", [])
    }
    for position, value in enumerate(values):
        if value in targeted:
            raise instruction.error(
                f"{kind} key {value!r} is already targeted by variation {targeted[value]}",
                f"values/{position}",
            )
    entry = next((t for t in _target_lists(config, kind) if t.get("variation") == variation), None)
    if entry is None:
        entry = {"values": [], "variation": variation}
        if kind == USER:
            config["targets"].append(entry)
        else:
            entry["contextKind"] = kind
            config["contextTargets"].append(entry)
    present = set(entry["values"])
    for value in values:
        if value not in present:
            present.add(value)
            entry["values"].append(value)
    _sync_user_markers(config)


def _remove_target_values(
    config: dict[str, Any], kind: str, variation: int | None, values: list[str] | None
) -> None:
    for target in _target_lists(config, kind):
        if variation is None or target.get("variation") == variation:
            unwanted = set(values or ())
            target["values"] = [
                v for v in target.get("values", []) if values is not None and v not in unwanted
            ]
    config["targets"] = [t for t in config["targets"] if t.get("values")]
    config["contextTargets"] = [
        t for t in config["contextTargets"] if t.get("values") or t.get("contextKind", USER) == USER
    ]
    _sync_user_markers(config)


def _sync_user_markers(config: dict[str, Any]) -> None:
    """Keep exactly one empty user entry in `contextTargets` per variation with user targets."""
    user_variations = [t["variation"] for t in config["targets"]]
    kept: list[dict[str, Any]] = []
    seen: set[int] = set()
    for target in config["contextTargets"]:
        is_marker = target.get("contextKind", USER) == USER and not target.get("values")
        if is_marker:
            if target.get("variation") not in user_variations or target["variation"] in seen:
                continue
            seen.add(target["variation"])
        kept.append(target)
    kept.extend(
        {"contextKind": USER, "values": [], "variation": variation}
        for variation in user_variations
        if variation not in seen
    )
    config["contextTargets"] = kept


def _add_targets(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    kind = _context_kind(instruction)
    variation = edit.variation_index(instruction)
    _add_target_values(config, kind, variation, instruction.strings("values"), instruction)


def _add_user_targets(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    variation = edit.variation_index(instruction)
    _add_target_values(config, USER, variation, instruction.strings("values"), instruction)


def _remove_targets(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    kind = _context_kind(instruction)
    variation = edit.variation_index(instruction)
    _remove_target_values(config, kind, variation, instruction.strings("values"))


def _remove_user_targets(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    variation = edit.variation_index(instruction)
    _remove_target_values(config, USER, variation, instruction.strings("values"))


def _replace_targets_of(edit: FlagEdit, instruction: Instruction, *, users_only: bool) -> None:
    config = edit.config(instruction)
    if users_only:
        config["targets"] = []
    else:
        config["targets"] = []
        config["contextTargets"] = []
    _sync_user_markers(config)
    for position, given in enumerate(instruction.objects("targets")):
        nested = instruction.nested(given)
        try:
            kind = USER if users_only else _context_kind(nested)
            variation = edit.variation_index(nested)
            _add_target_values(config, kind, variation, nested.strings("values"), nested)
        except ValidationError as error:
            tail = (error.path or "").removeprefix(instruction.path())
            raise ValidationError(
                error.message, path=f"{instruction.path('targets')}/{position}{tail}"
            ) from None


def _replace_targets(edit: FlagEdit, instruction: Instruction) -> None:
    _replace_targets_of(edit, instruction, users_only=False)


def _replace_user_targets(edit: FlagEdit, instruction: Instruction) -> None:
    _replace_targets_of(edit, instruction, users_only=True)


def _clear_targets(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    variation = edit.variation_index(instruction)
    kinds = {USER} | {t.get("contextKind", USER) for t in config["contextTargets"]}
    for kind in kinds:
        _remove_target_values(config, kind, variation, None)


def _clear_user_targets(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    _remove_target_values(config, USER, edit.variation_index(instruction), None)


TARGET_INSTRUCTIONS: dict[str, FlagHandler] = {
    "addTargets": _add_targets,
    "removeTargets": _remove_targets,
    "replaceTargets": _replace_targets,
    "clearTargets": _clear_targets,
    "addUserTargets": _add_user_targets,
    "removeUserTargets": _remove_user_targets,
    "replaceUserTargets": _replace_user_targets,
    "clearUserTargets": _clear_user_targets,
}
"""The individual-target instruction kinds, by LaunchDarkly's name."""
