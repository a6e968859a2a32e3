"""OpenFeature for Flagstaff: `FlagstaffProvider(client)` (needs the `openfeature` extra,
`pip install flagstaff-sdk[openfeature]`) and the evaluation-context mapping it uses.
"""

from flagstaff_sdk.openfeature.context_mapping import ContextMappingError, to_context
from flagstaff_sdk.openfeature.provider import PROVIDER_NAME, FlagstaffProvider

__all__ = ["PROVIDER_NAME", "ContextMappingError", "FlagstaffProvider", "to_context"]
