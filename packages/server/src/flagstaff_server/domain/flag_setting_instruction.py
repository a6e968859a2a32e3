"""Semantic patch for flags, the settings families: an environment's targeting switch, default
rule, off variation and event tracking; the flag's name, description, tags, maintainers, custom
properties, client-side availability, and archiving, deprecation and deletion.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.flag_edit import FlagEdit, FlagHandler
from flagstaff_server.domain.instruction import Instruction, add_tags, remove_tags

# --- one environment's settings ----------------------------------------------------------------


def _turn_flag_on(edit: FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["on"] = True


def _turn_flag_off(edit: FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["on"] = False


def _update_track_events(edit: FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["trackEvents"] = instruction.boolean("trackEvents")


def _update_track_events_fallthrough(edit: FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["trackEventsFallthrough"] = instruction.boolean("trackEvents")


def _update_fallthrough(edit: FlagEdit, instruction: Instruction) -> None:
    edit.config(instruction)["fallthrough"] = edit.served(instruction)


def _update_off_variation(edit: FlagEdit, instruction: Instruction) -> None:
    config = edit.config(instruction)
    config["offVariation"] = (
        edit.variation_index(instruction) if instruction.has("variationId") else None
    )


# --- flag-wide settings ------------------------------------------------------------------------


def _setter(name: str, value: Any) -> FlagHandler:
    def apply(edit: FlagEdit, instruction: Instruction) -> None:
        edit.document[name] = value

    return apply


def _update_name(edit: FlagEdit, instruction: Instruction) -> None:
    name = instruction.string("value")
    if not name.strip():
        raise instruction.error("a flag needs a non-empty name", "value")
    edit.document["name"] = name


def _update_description(edit: FlagEdit, instruction: Instruction) -> None:
    edit.document["description"] = instruction.string("value")


def _client_side(on: bool) -> FlagHandler:
    def apply(edit: FlagEdit, instruction: Instruction) -> None:
        which = instruction.string("value")
        if which not in ("usingMobileKey", "usingEnvironmentId"):
            raise instruction.error(
                "'value' must be 'usingMobileKey' or 'usingEnvironmentId'", "value"
            )
        availability = edit.document.setdefault(
            "clientSideAvailability", {"usingMobileKey": True, "usingEnvironmentId": False}
        )
        availability[which] = on
        edit.document["includeInSnippet"] = bool(availability.get("usingEnvironmentId", False))

    return apply


def _archive(archived: bool) -> FlagHandler:
    def apply(edit: FlagEdit, instruction: Instruction) -> None:
        edit.document["archived"] = archived
        if archived:
            edit.document["archivedDate"] = edit.now_ms
        else:
            edit.document.pop("archivedDate", None)
        for config in edit.document.get("environments", {}).values():
            config["archived"] = archived

    return apply


def _deprecate(deprecated: bool) -> FlagHandler:
    def apply(edit: FlagEdit, instruction: Instruction) -> None:
        edit.document["deprecated"] = deprecated
        if deprecated:
            edit.document["deprecatedDate"] = edit.now_ms
        else:
            edit.document.pop("deprecatedDate", None)

    return apply


def _delete_flag(edit: FlagEdit, instruction: Instruction) -> None:
    edit.requests.add("delete")


def _add_tags(edit: FlagEdit, instruction: Instruction) -> None:
    add_tags(edit.document, instruction)


def _remove_tags(edit: FlagEdit, instruction: Instruction) -> None:
    remove_tags(edit.document, instruction)


def _update_maintainer_member(edit: FlagEdit, instruction: Instruction) -> None:
    edit.document["maintainerId"] = instruction.string("value")


def _remove_maintainer(edit: FlagEdit, instruction: Instruction) -> None:
    for name in ("maintainerId", "maintainerTeamKey", "_maintainer", "_maintainerTeam"):
        edit.document.pop(name, None)


def _update_maintainer_team(edit: FlagEdit, instruction: Instruction) -> None:
    edit.document["maintainerTeamKey"] = instruction.string("value")


def _custom_property(edit: FlagEdit, instruction: Instruction) -> tuple[str, dict[str, Any]]:
    properties: dict[str, Any] = edit.document.setdefault("customProperties", {})
    return instruction.string("key"), properties


def _add_custom_properties(edit: FlagEdit, instruction: Instruction) -> None:
    key, properties = _custom_property(edit, instruction)
    existing = properties.get(key) or {
        "name": instruction.optional_string("name") or key,
        "value": [],
    }
    for value in instruction.strings("values"):
        if value not in existing["value"]:
            existing["value"].append(value)
    properties[key] = existing


def _replace_custom_properties(edit: FlagEdit, instruction: Instruction) -> None:
    key, properties = _custom_property(edit, instruction)
    name = instruction.optional_string("name") or (properties.get(key) or {}).get("name") or key
    properties[key] = {"name": name, "value": instruction.strings("values")}


def _remove_custom_properties(edit: FlagEdit, instruction: Instruction) -> None:
    key, properties = _custom_property(edit, instruction)
    if key not in properties:
        raise instruction.error(f"no custom property {key!r}", "key")
    unwanted = instruction.strings("values")
    remaining = [v for v in properties[key].get("value", []) if v not in unwanted]
    if remaining:
        properties[key]["value"] = remaining
    else:
        del properties[key]


SETTING_INSTRUCTIONS: dict[str, FlagHandler] = {
    "turnFlagOn": _turn_flag_on,
    "turnFlagOff": _turn_flag_off,
    "updateFallthroughVariationOrRollout": _update_fallthrough,
    "updateOffVariation": _update_off_variation,
    "updateTrackEvents": _update_track_events,
    "updateTrackEventsFallthrough": _update_track_events_fallthrough,
    "turnOnClientSideAvailability": _client_side(True),
    "turnOffClientSideAvailability": _client_side(False),
    "updateName": _update_name,
    "updateDescription": _update_description,
    "addTags": _add_tags,
    "removeTags": _remove_tags,
    "makeFlagPermanent": _setter("temporary", False),
    "makeFlagTemporary": _setter("temporary", True),
    "archiveFlag": _archive(True),
    "restoreFlag": _archive(False),
    "deprecateFlag": _deprecate(True),
    "restoreDeprecatedFlag": _deprecate(False),
    "deleteFlag": _delete_flag,
    "updateMaintainerMember": _update_maintainer_member,
    "updateMaintainerTeam": _update_maintainer_team,
    "removeMaintainer": _remove_maintainer,
    "addCustomProperties": _add_custom_properties,
    "removeCustomProperties": _remove_custom_properties,
    "replaceCustomProperties": _replace_custom_properties,
}
"""The settings instruction kinds, by LaunchDarkly's name."""
