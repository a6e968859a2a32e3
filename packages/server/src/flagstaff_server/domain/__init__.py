"""Pure rules of the control plane over REST documents (plain JSON dicts): creating flags and
segments, validating them, JSON Patch / Merge Patch / semantic patch, version bookkeeping and
conversion to and from LaunchDarkly's SDK JSON. No I/O, no clock: pass `now_ms` and an id factory.
"""

from flagstaff_server.domain.conversion import (
    environment_config_from_sdk,
    flag_document_from_sdk,
    merge_sdk_flag,
    segment_document_from_sdk,
    to_sdk_flag,
    to_sdk_segment,
)
from flagstaff_server.domain.document import Document, IdFactory, json_equal, pointer
from flagstaff_server.domain.flag import (
    add_environment_to_flag,
    fill_flag_ids,
    new_environment_config,
    present_flag,
    remove_environment_from_flag,
)
from flagstaff_server.domain.flag_change import FlagChange, flag_change
from flagstaff_server.domain.flag_creation import new_flag_document
from flagstaff_server.domain.flag_instruction import FLAG_INSTRUCTIONS, apply_semantic_patch
from flagstaff_server.domain.flag_patch import apply_flag_json_patch, apply_flag_merge_patch
from flagstaff_server.domain.flag_validation import FlagLookup, validate_flag_document
from flagstaff_server.domain.instruction import (
    SemanticPatch,
    SemanticPatchResult,
    parse_semantic_patch_body,
)
from flagstaff_server.domain.json_patch import (
    PatchRequest,
    apply_json_patch,
    apply_merge_patch,
    parse_patch_body,
)
from flagstaff_server.domain.segment import (
    apply_segment_json_patch,
    apply_segment_merge_patch,
    fill_segment_ids,
    new_segment_document,
    present_segment,
)
from flagstaff_server.domain.segment_instruction import (
    SEGMENT_INSTRUCTIONS,
    apply_segment_semantic_patch,
)
from flagstaff_server.domain.segment_validation import validate_segment_document
from flagstaff_server.domain.version import VersionBump, bump_segment_version, bump_versions

__all__ = [
    "FLAG_INSTRUCTIONS",
    "SEGMENT_INSTRUCTIONS",
    "Document",
    "FlagChange",
    "FlagLookup",
    "IdFactory",
    "PatchRequest",
    "SemanticPatch",
    "SemanticPatchResult",
    "VersionBump",
    "add_environment_to_flag",
    "apply_flag_json_patch",
    "apply_flag_merge_patch",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_segment_json_patch",
    "apply_segment_merge_patch",
    "apply_segment_semantic_patch",
    "apply_semantic_patch",
    "bump_segment_version",
    "bump_versions",
    "environment_config_from_sdk",
    "fill_flag_ids",
    "fill_segment_ids",
    "flag_change",
    "flag_document_from_sdk",
    "json_equal",
    "merge_sdk_flag",
    "new_environment_config",
    "new_flag_document",
    "new_segment_document",
    "parse_patch_body",
    "parse_semantic_patch_body",
    "pointer",
    "present_flag",
    "present_segment",
    "remove_environment_from_flag",
    "segment_document_from_sdk",
    "to_sdk_flag",
    "to_sdk_segment",
    "validate_flag_document",
    "validate_segment_document",
]
