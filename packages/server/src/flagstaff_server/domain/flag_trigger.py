"""Flag triggers in LaunchDarkly's shapes, pure: the create body (`integrationKey`, exactly one
`turnFlagOn`/`turnFlagOff` instruction, `comment`) and the semantic patch that edits a trigger
(`replaceTriggerActionInstructions`, `cycleTriggerUrl`, `disableTrigger`, `enableTrigger`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import require_comment
from flagstaff_server.domain.instruction import check_instructions
from flagstaff_server.errors import InvalidInput, ValidationError

INTEGRATIONS = (
    "generic-trigger",
    "datadog",
    "dynatrace",
    "honeycomb",
    "new-relic-apm",
    "signalfx",
)
"""The integration keys LaunchDarkly names; `generic-trigger` is any tool that can POST."""
ACTIONS = ("turnFlagOn", "turnFlagOff")
EDIT_KINDS = (
    "replaceTriggerActionInstructions",
    "cycleTriggerUrl",
    "disableTrigger",
    "enableTrigger",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerRequest:
    integration: str
    instructions: list[dict[str, Any]]
    comment: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerEdit:
    instructions: list[dict[str, Any]] | None = None
    cycle: bool = False
    enabled: bool | None = None
    comment: str | None = None


def check_action(value: Any, path: str) -> list[dict[str, Any]]:
    """Exactly one instruction, `turnFlagOn` or `turnFlagOff` (LaunchDarkly's rule)."""
    if not isinstance(value, list) or len(value) != 1:
        raise ValidationError(
            "a trigger takes exactly one instruction: turnFlagOn or turnFlagOff", path=path
        )
    [instruction] = value
    if not isinstance(instruction, dict) or instruction.get("kind") not in ACTIONS:
        raise ValidationError(
            'a trigger\'s instruction is {"kind": "turnFlagOn"} or {"kind": "turnFlagOff"}',
            path=f"{path}/0/kind" if isinstance(instruction, dict) else f"{path}/0",
        )
    return [{"kind": instruction["kind"]}]


def parse_trigger_body(body: Any) -> TriggerRequest:
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    integration = body.get("integrationKey")
    if not isinstance(integration, str) or integration not in INTEGRATIONS:
        raise ValidationError(
            f"'integrationKey' must be one of {', '.join(INTEGRATIONS)}", path="/integrationKey"
        )
    return TriggerRequest(
        integration=integration,
        instructions=check_action(body.get("instructions"), "/instructions"),
        comment=require_comment(body),
    )


def parse_trigger_patch(body: Any) -> TriggerEdit:
    """LaunchDarkly's semantic patch of a trigger, all or nothing."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    comment = require_comment(body)
    instructions: list[dict[str, Any]] | None = None
    cycle = False
    enabled: bool | None = None
    for index, instruction in enumerate(check_instructions(body.get("instructions"))):
        kind, at = instruction["kind"], f"/instructions/{index}"
        if kind == "replaceTriggerActionInstructions":
            instructions = check_action(instruction.get("value"), f"{at}/value")
        elif kind == "cycleTriggerUrl":
            cycle = True
        elif kind in ("disableTrigger", "enableTrigger"):
            enabled = kind == "enableTrigger"
        else:
            raise ValidationError(
                f"unknown instruction kind {kind!r} for a trigger: use " + ", ".join(EDIT_KINDS),
                path=f"{at}/kind",
            )
    return TriggerEdit(instructions=instructions, cycle=cycle, enabled=enabled, comment=comment)
