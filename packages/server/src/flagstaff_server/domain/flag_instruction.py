"""Semantic patch for flags (LaunchDarkly's `domain-model=launchdarkly.semanticpatch`): each
instruction kind edits a copy of the flag document; the first bad instruction raises and the
caller's document is untouched. Variations, rules and clauses are named by `_id`. Pure; the result
still needs `validate_flag_document` and `bump_versions`.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import Document, IdFactory, clone
from flagstaff_server.domain.flag import fill_flag_ids
from flagstaff_server.domain.flag_edit import FlagEdit, FlagHandler
from flagstaff_server.domain.flag_prerequisite_instruction import PREREQUISITE_INSTRUCTIONS
from flagstaff_server.domain.flag_rule_instruction import RULE_INSTRUCTIONS
from flagstaff_server.domain.flag_setting_instruction import SETTING_INSTRUCTIONS
from flagstaff_server.domain.flag_target_instruction import TARGET_INSTRUCTIONS
from flagstaff_server.domain.flag_validation import FlagLookup
from flagstaff_server.domain.flag_variation_instruction import VARIATION_INSTRUCTIONS
from flagstaff_server.domain.instruction import Instruction, SemanticPatchResult, check_instructions


def apply_semantic_patch(
    document: Document,
    instructions: Any,
    *,
    environment_key: str | None,
    now_ms: int,
    new_id: IdFactory,
    flag_lookup: FlagLookup | None = None,
) -> SemanticPatchResult:
    """Apply flag instructions in order, all or nothing.

    `flag_lookup` resolves prerequisite flags (`addPrerequisite` names their variations by id).
    `deleteFlag` sets `result.delete`; the caller deletes the flag instead of storing it.
    """
    edit = FlagEdit(
        document=clone(document),
        environment_key=environment_key,
        now_ms=now_ms,
        new_id=new_id,
        flag_lookup=flag_lookup,
    )
    for index, params in enumerate(check_instructions(instructions)):
        instruction = Instruction(index=index, params=params)
        handler = FLAG_INSTRUCTIONS.get(instruction.kind)
        if handler is None:
            raise instruction.error(f"unknown instruction kind {instruction.kind!r}", "kind")
        handler(edit, instruction)
    return SemanticPatchResult(
        document=fill_flag_ids(edit.document, new_id=new_id), delete="delete" in edit.requests
    )


FLAG_INSTRUCTIONS: dict[str, FlagHandler] = {
    **SETTING_INSTRUCTIONS,
    **RULE_INSTRUCTIONS,
    **TARGET_INSTRUCTIONS,
    **PREREQUISITE_INSTRUCTIONS,
    **VARIATION_INSTRUCTIONS,
}
"""Every supported flag instruction kind, by LaunchDarkly's name; one family per module."""
