"""What one edit of a flag changed, as the audit log files and words it: the environments whose
configuration changed, whether anything flag-level (name, variations, tags, ...) changed, and
whether the edit only switched targeting on or off. Pure: compares two REST documents.
"""

from __future__ import annotations

from dataclasses import dataclass

from flagstaff_server.domain.document import Document, json_equal
from flagstaff_server.domain.version import ENVIRONMENT_BOOKKEEPING

# Fields outside `environments` that an edit's bookkeeping moves, not the editor.
FLAG_BOOKKEEPING = frozenset({"_version", "_links", "environments"})


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagChange:
    environments: tuple[str, ...]
    """Environments whose configuration was added, removed or edited, in the document's order."""
    flag_level: bool
    """A field shared by every environment changed (or the flag was created or deleted)."""
    switched_on: bool | None = None
    """True / False when the edit only turned one environment's targeting on / off."""

    @property
    def environment(self) -> str | None:
        """The one environment the edit is confined to, if it is."""
        if self.flag_level or len(self.environments) != 1:
            return None
        return self.environments[0]


def flag_change(before: Document | None, after: Document | None) -> FlagChange:
    """Compare the flag before and after an edit (None: it did not exist / no longer exists)."""
    if before is None or after is None:
        present = after if after is not None else before
        every = tuple((present or {}).get("environments", {}))
        return FlagChange(environments=every, flag_level=True)
    old, new = before.get("environments", {}), after.get("environments", {})
    changed = tuple(
        key
        for key in [*new, *(key for key in old if key not in new)]
        if key not in old
        or key not in new
        or not json_equal(_setting(old[key]), _setting(new[key]))
    )
    flag_level = not json_equal(_flag_fields(before), _flag_fields(after))
    switched_on = None
    if not flag_level and len(changed) == 1 and changed[0] in old and changed[0] in new:
        was, now = _setting(old[changed[0]]), _setting(new[changed[0]])
        on = now.get("on")
        if isinstance(on, bool) and json_equal({**was, "on": on}, now):
            switched_on = on
    return FlagChange(environments=changed, flag_level=flag_level, switched_on=switched_on)


def _setting(config: object) -> dict[str, object]:
    if not isinstance(config, dict):
        return {}
    return {k: v for k, v in config.items() if k not in ENVIRONMENT_BOOKKEEPING}


def _flag_fields(document: Document) -> Document:
    return {k: v for k, v in document.items() if k not in FLAG_BOOKKEEPING}
