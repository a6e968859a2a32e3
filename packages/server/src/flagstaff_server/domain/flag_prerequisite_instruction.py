"""Semantic patch for flags, the prerequisites family: other flags of the project named by key,
their variations by `_id` (read through the caller's flag lookup).
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.flag_edit import FlagEdit, FlagHandler
from flagstaff_server.domain.instruction import Instruction
from flagstaff_server.errors import ValidationError


def _prerequisite(edit: FlagEdit, instruction: Instruction) -> dict[str, Any]:
    key = instruction.string("key")
    if key == edit.document.get("key"):
        raise instruction.error("a flag cannot be its own prerequisite", "key")
    other = edit.flag_lookup(key) if edit.flag_lookup is not None else None
    if other is None:
        raise instruction.error(f"prerequisite flag {key!r} does not exist", "key")
    variation_id = instruction.string("variationId")
    for index, variation in enumerate(other.get("variations", [])):
        if variation.get("_id") == variation_id:
            return {"key": key, "variation": index}
    raise instruction.error(
        f"flag {key!r} has no variation with id {variation_id!r}", "variationId"
    )


def _add_prerequisite(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    prerequisite = _prerequisite(edit, instruction)
    if any(p.get("key") == prerequisite["key"] for p in config["prerequisites"]):
        raise instruction.error(f"{prerequisite['key']!r} is already a prerequisite", "key")
    config["prerequisites"].append(prerequisite)


def _remove_prerequisite(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    key = instruction.string("key")
    kept = [p for p in config["prerequisites"] if p.get("key") != key]
    if len(kept) == len(config["prerequisites"]):
        raise instruction.error(f"{key!r} is not a prerequisite", "key")
    config["prerequisites"] = kept


def _update_prerequisite(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    prerequisite = _prerequisite(edit, instruction)
    for existing in config["prerequisites"]:
        if existing.get("key") == prerequisite["key"]:
            existing["variation"] = prerequisite["variation"]
            return
    raise instruction.error(f"{prerequisite['key']!r} is not a prerequisite", "key")


def _replace_prerequisites(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    prerequisites: list[dict[str, Any]] = []
    for position, given in enumerate(instruction.objects("prerequisites")):
        nested = instruction.nested(given)
        try:
            prerequisite = _prerequisite(edit, nested)
        except ValidationError as error:
            tail = (error.path or "").removeprefix(instruction.path())
            raise ValidationError(
                error.message, path=f"{instruction.path('prerequisites')}/{position}{tail}"
            ) from None
        if any(p["key"] == prerequisite["key"] for p in prerequisites):
            raise instruction.error(
                f"{prerequisite['key']!r} is listed twice", f"prerequisites/{position}/key"
            )
        prerequisites.append(prerequisite)
    config["prerequisites"] = prerequisites


PREREQUISITE_INSTRUCTIONS: dict[str, FlagHandler] = {
    "addPrerequisite": _add_prerequisite,
    "removePrerequisite": _remove_prerequisite,
    "updatePrerequisite": _update_prerequisite,
    "replacePrerequisites": _replace_prerequisites,
}
"""The prerequisite instruction kinds, by LaunchDarkly's name."""
