"""Semantic patch for flags, the variations family: adding, changing and removing variations
(a variation still served cannot go; removing one renumbers every index above it) and the
variations a new environment starts with.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import Document, json_equal
from flagstaff_server.domain.flag import flag_kind
from flagstaff_server.domain.flag_edit import FlagEdit, FlagHandler
from flagstaff_server.domain.instruction import Instruction


def _check_unique_value(edit: FlagEdit, instruction: Instruction, value: Any, skip: int) -> None:
    for index, variation in enumerate(edit.document.get("variations", [])):
        if index != skip and json_equal(variation.get("value"), value):
            raise instruction.error(f"variation {index} already has this value", "value")


def _add_variation(edit: FlagEdit, instruction: Instruction) -> None:
    value = instruction.value("value")
    _check_unique_value(edit, instruction, value, skip=-1)
    variation: dict[str, Any] = {"_id": edit.new_id(), "value": value}
    for name in ("name", "description"):
        if instruction.has(name):
            variation[name] = instruction.string(name)
    edit.document.setdefault("variations", []).append(variation)
    edit.document["kind"] = flag_kind(edit.document["variations"])


def _update_variation(edit: FlagEdit, instruction: Instruction) -> None:
    index = edit.variation_index(instruction)
    variation = edit.document["variations"][index]
    if "value" in instruction.params:
        value = instruction.value("value")
        _check_unique_value(edit, instruction, value, skip=index)
        variation["value"] = value
    for name in ("name", "description"):
        if instruction.has(name):
            variation[name] = instruction.string(name)
    edit.document["kind"] = flag_kind(edit.document["variations"])


def _variation_uses(document: Document, index: int) -> list[str]:
    """Where a variation index is served (so it cannot be removed)."""
    uses: list[str] = []
    defaults = document.get("defaults") or {}
    uses += [
        f"defaults.{name}"
        for name in ("onVariation", "offVariation")
        if defaults.get(name) == index
    ]
    for env_key, config in document.get("environments", {}).items():
        if config.get("offVariation") == index:
            uses.append(f"{env_key} off variation")
        if _serves(config.get("fallthrough") or {}, index):
            uses.append(f"{env_key} default rule")
        uses += [
            f"{env_key} rule {rule.get('_id')}"
            for rule in config.get("rules", [])
            if _serves(rule, index)
        ]
        for name in ("targets", "contextTargets"):
            if any(t.get("variation") == index and t.get("values") for t in config.get(name, [])):
                uses.append(f"{env_key} individual targets")
    return uses


def _serves(holder: dict[str, Any], index: int) -> bool:
    if holder.get("variation") == index:
        return True
    rollout = holder.get("rollout") or {}
    return any(
        item.get("variation") == index and item.get("weight", 0) > 0
        for item in rollout.get("variations", [])
    )


def _remove_variation(edit: FlagEdit, instruction: Instruction) -> None:
    index = edit.variation_index(instruction)
    uses = _variation_uses(edit.document, index)
    if uses:
        raise instruction.error(
            f"variation {index} is still in use ({', '.join(uses)})", "variationId"
        )
    del edit.document["variations"][index]
    _shift_indices(edit.document, index)
    edit.document["kind"] = flag_kind(edit.document["variations"])


def _shift_indices(document: Document, removed: int) -> None:
    """Renumber every variation index above `removed` after it is deleted."""

    def shift(holder: dict[str, Any], name: str) -> None:
        value = holder.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > removed:
            holder[name] = value - 1

    def shift_served(holder: dict[str, Any]) -> None:
        shift(holder, "variation")
        rollout = holder.get("rollout")
        if isinstance(rollout, dict):
            # only zero-weight entries can still name the removed variation
            rollout["variations"] = [
                item for item in rollout.get("variations", []) if item.get("variation") != removed
            ]
            for item in rollout["variations"]:
                shift(item, "variation")

    defaults = document.get("defaults") or {}
    shift(defaults, "onVariation")
    shift(defaults, "offVariation")
    for config in document.get("environments", {}).values():
        shift(config, "offVariation")
        shift_served(config.get("fallthrough") or {})
        for rule in config.get("rules", []):
            shift_served(rule)
        for name in ("targets", "contextTargets"):
            config[name] = [t for t in config.get(name, []) if t.get("variation") != removed]
            for target in config[name]:
                shift(target, "variation")


def _update_default_variation(edit: FlagEdit, instruction: Instruction) -> None:
    defaults = edit.document.setdefault("defaults", {"onVariation": 0, "offVariation": 0})
    found = False
    for name, target in (
        ("onVariationValue", "onVariation"),
        ("offVariationValue", "offVariation"),
    ):
        spelled = next(
            (n for n in (name, name[0].upper() + name[1:]) if n in instruction.params), None
        )
        if spelled is None:
            continue
        found = True
        wanted = instruction.params[spelled]
        values = [v.get("value") for v in edit.document.get("variations", [])]
        index = next((i for i, value in enumerate(values) if json_equal(value, wanted)), None)
        if index is None:
            raise instruction.error(f"no variation has the value {wanted!r}", spelled)
        defaults[target] = index
    if not found:
        raise instruction.error(
            "'onVariationValue' or 'offVariationValue' is required", "onVariationValue"
        )


VARIATION_INSTRUCTIONS: dict[str, FlagHandler] = {
    "updateDefaultVariation": _update_default_variation,
    "addVariation": _add_variation,
    "removeVariation": _remove_variation,
    "updateVariation": _update_variation,
}
"""The variation instruction kinds, by LaunchDarkly's name."""
