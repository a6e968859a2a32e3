"""The state one flag semantic patch works on (`FlagEdit`: a private copy of the flag, edited in
place, and what the caller is asked to do) and what every instruction family reads through it:
the environment an instruction edits, a variation named by `_id`, what a rule or the default rule
serves. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flagstaff_server.domain.document import Document, IdFactory, is_valid_context_kind
from flagstaff_server.domain.flag_validation import FlagLookup
from flagstaff_server.domain.instruction import Instruction
from flagstaff_server.domain.validation import TOTAL_WEIGHT, is_attribute_reference
from flagstaff_server.errors import ValidationError

USER = "user"
FlagHandler = Callable[["FlagEdit", Instruction], None]
"""One instruction kind: edits `FlagEdit.document` in place or raises `ValidationError`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagEdit:
    """What one semantic patch works on: a private copy of the flag, edited in place."""

    document: Document
    environment_key: str | None
    now_ms: int
    new_id: IdFactory
    flag_lookup: FlagLookup | None
    requests: set[str] = field(default_factory=set)
    """Outcomes for the caller rather than the document ("delete")."""

    def config(self, instruction: Instruction) -> dict[str, Any]:
        """The environment configuration an environment-scoped instruction edits."""
        if self.environment_key is None:
            raise ValidationError(
                f"instruction {instruction.index} ({instruction.kind}) needs 'environmentKey'",
                path="/environmentKey",
            )
        config: dict[str, Any] | None = self.document.get("environments", {}).get(
            self.environment_key
        )
        if config is None:
            raise ValidationError(
                f"flag {self.document.get('key')!r} has no environment {self.environment_key!r}",
                path="/environmentKey",
            )
        for name in ("targets", "contextTargets", "rules", "prerequisites"):
            config.setdefault(name, [])
        return config

    def variation_index(self, instruction: Instruction, name: str = "variationId") -> int:
        variation_id = instruction.string(name)
        for index, variation in enumerate(self.document.get("variations", [])):
            if variation.get("_id") == variation_id:
                return index
        raise instruction.error(f"no variation with id {variation_id!r}", name)

    def served(self, instruction: Instruction) -> dict[str, Any]:
        """`{"variation": i}` from `variationId`, or `{"rollout": ...}` from `rolloutWeights`."""
        if instruction.has("variationId"):
            return {"variation": self.variation_index(instruction)}
        if not instruction.has("rolloutWeights"):
            raise instruction.error("'variationId' or 'rolloutWeights' is required", "variationId")
        weights = instruction.mapping("rolloutWeights")
        ids = {v.get("_id"): i for i, v in enumerate(self.document.get("variations", []))}
        weighted: list[dict[str, Any]] = []
        for variation_id, weight in weights.items():
            where = f"rolloutWeights/{variation_id}"
            if variation_id not in ids:
                raise instruction.error(f"no variation with id {variation_id!r}", where)
            if isinstance(weight, bool) or not isinstance(weight, int):
                raise instruction.error("weights must be integers", where)
            if not 0 <= weight <= TOTAL_WEIGHT:
                raise instruction.error(f"weight {weight} is outside 0..{TOTAL_WEIGHT}", where)
            weighted.append({"variation": ids[variation_id], "weight": weight})
        total = sum(item["weight"] for item in weighted)
        if total != TOTAL_WEIGHT:
            raise instruction.error(
                f"weights add up to {total}, not {TOTAL_WEIGHT} (100%)", "rolloutWeights"
            )
        rollout: dict[str, Any] = {
            "variations": sorted(weighted, key=lambda item: int(item["variation"])),
            "contextKind": instruction.optional_string("rolloutContextKind") or USER,
        }
        if not is_valid_context_kind(rollout["contextKind"]):
            raise instruction.error("invalid context kind", "rolloutContextKind")
        if instruction.has("rolloutBucketBy"):
            rollout["bucketBy"] = instruction.string("rolloutBucketBy")
            if not is_attribute_reference(rollout["bucketBy"]):
                raise instruction.error("invalid attribute reference", "rolloutBucketBy")
        return {"rollout": rollout}
