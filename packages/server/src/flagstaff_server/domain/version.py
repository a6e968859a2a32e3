"""Version bookkeeping after an edit: the flag's `_version` and, for each environment whose
configuration (or SDK-visible flag-level data) changed, the environment `version` and
`lastModified`. The services write one change record per changed environment. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import Document, clone, copy_configurations, json_equal

ENVIRONMENT_BOOKKEEPING = frozenset({"version", "lastModified", "_site", "_summary"})
SDK_VISIBLE_FLAG_FIELDS = ("variations", "clientSideAvailability", "includeInSnippet", "key")


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionBump:
    """The edited document with its versions advanced, and what changed."""

    document: Document
    changed: bool
    changed_environments: tuple[str, ...]


def bump_versions(before: Document, after: Document, now_ms: int) -> VersionBump:
    """Advance versions of an edited flag; an edit that changed nothing keeps every version.
    `after` is left as it was; the answer shares its values below the configurations."""
    document: Document = copy_configurations(after)
    if json_equal(_without_bookkeeping(before), _without_bookkeeping(after)):
        return VersionBump(document=document, changed=False, changed_environments=())
    document["_version"] = int(before.get("_version", 0)) + 1
    flag_level_changed = not all(
        json_equal(_sdk_visible(before, name), _sdk_visible(after, name))
        for name in SDK_VISIBLE_FLAG_FIELDS
    )
    old_environments = before.get("environments", {})
    changed: list[str] = []
    for env_key, config in document.get("environments", {}).items():
        old = old_environments.get(env_key)
        if (
            old is None
            or flag_level_changed
            or not json_equal(_config_without_bookkeeping(old), _config_without_bookkeeping(config))
        ):
            config["version"] = int((old or {}).get("version", 0)) + 1
            config["lastModified"] = now_ms
            changed.append(env_key)
    return VersionBump(document=document, changed=True, changed_environments=tuple(changed))


def bump_segment_version(before: Document, after: Document, now_ms: int) -> VersionBump:
    """Advance `version` and `lastModifiedDate` of an edited segment, unless nothing changed."""
    document: Document = clone(after)
    ignored = ("version", "lastModifiedDate", "_links")
    if json_equal(
        {k: v for k, v in before.items() if k not in ignored},
        {k: v for k, v in after.items() if k not in ignored},
    ):
        return VersionBump(document=document, changed=False, changed_environments=())
    document["version"] = int(before.get("version", 0)) + 1
    document["lastModifiedDate"] = now_ms
    return VersionBump(document=document, changed=True, changed_environments=())


def _sdk_visible(document: Document, name: str) -> Any:
    if name == "variations":
        return [variation.get("value") for variation in document.get("variations", [])]
    return document.get(name)


def _config_without_bookkeeping(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in ENVIRONMENT_BOOKKEEPING}


def _without_bookkeeping(document: Document) -> dict[str, Any]:
    result = {k: v for k, v in document.items() if k not in ("_version", "_links")}
    result["environments"] = {
        env_key: _config_without_bookkeeping(config)
        for env_key, config in document.get("environments", {}).items()
    }
    return result


def jumped_flag(document: Document, gap: int) -> Document:
    """The flag with `_version` and every environment's `version` moved `gap` on (an epoch
    start: later edits count on from there, above what a lost primary may have handed out)."""
    jumped: Document = clone(document)
    jumped["_version"] = int(jumped.get("_version", 0)) + gap
    for config in jumped.get("environments", {}).values():
        config["version"] = int(config.get("version", 0)) + gap
    return jumped


def jumped_segment(document: Document, gap: int) -> Document:
    """The segment with its `version` moved `gap` on (as `jumped_flag`)."""
    jumped: Document = clone(document)
    jumped["version"] = int(jumped.get("version", 0)) + gap
    return jumped
