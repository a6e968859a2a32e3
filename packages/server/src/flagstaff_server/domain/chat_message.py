"""What a chat integration posts for one change, pure: a Slack-compatible incoming-webhook
message (Block Kit: who changed what, where, a summary of the difference and a button to the
resource in the UI) and Flagstaff's generic JSON with the same facts. Built from the audit entry
as the API shows it (`services.audit.represent`); no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_LINES = 10
"""Summary lines shown; more are counted ("and 3 more changes")."""
MAX_TEXT = 2900
"""Under Block Kit's 3000-character limit of a section's text."""
ENVIRONMENT_FIELDS = (
    "on",
    "offVariation",
    "fallthrough",
    "targets",
    "contextTargets",
    "rules",
    "prerequisites",
    "trackEvents",
    "trackEventsFallthrough",
)
FLAG_FIELDS = (
    "name",
    "description",
    "tags",
    "variations",
    "temporary",
    "archived",
    "deprecated",
    "clientSideAvailability",
    "defaults",
)
BOOKKEEPING = frozenset(
    {"_version", "version", "lastModified", "creationDate", "_lastModified", "salt", "_site"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeFacts:
    """One change as a chat message tells it."""

    who: str
    title: str
    """The entry's sentence: "alice turned on the flag checkout in Production: launch"."""
    kind: str
    project: str | None
    environment: str | None
    key: str | None
    comment: str | None
    summary: tuple[str, ...]
    link: str
    entry_id: str
    date: int


def _short(value: Any) -> str:
    text = (
        repr(value)
        if isinstance(value, str)
        else str(value).lower()
        if isinstance(value, bool)
        else str(value)
    )
    return text if len(text) <= 60 else text[:57] + "..."


def _field_line(name: str, before: Any, after: Any) -> str:
    if isinstance(before, list) or isinstance(after, list):
        return f"{name}: {len(before or [])} → {len(after or [])} item(s)"
    if isinstance(before, dict) or isinstance(after, dict):
        return f"{name} changed"
    return f"{name}: {_short(before)} → {_short(after)}"


def flag_summary(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    lines = [
        _field_line(name, before.get(name), after.get(name))
        for name in FLAG_FIELDS
        if before.get(name) != after.get(name)
    ]
    environments_before = before.get("environments") or {}
    environments_after = after.get("environments") or {}
    for environment in sorted(set(environments_before) | set(environments_after)):
        was = environments_before.get(environment) or {}
        now = environments_after.get(environment) or {}
        for name in ENVIRONMENT_FIELDS:
            if was.get(name) == now.get(name):
                continue
            if name == "on":
                lines.append(f"{environment}: turned {'on' if now.get('on') else 'off'}")
            else:
                lines.append(f"{environment}: " + _field_line(name, was.get(name), now.get(name)))
    return lines


def other_summary(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    names = sorted(
        name
        for name in set(before) | set(after)
        if name not in BOOKKEEPING and before.get(name) != after.get(name)
    )
    return [_field_line(name, before.get(name), after.get(name)) for name in names]


def summary_of(kind: str, before: Any, after: Any) -> tuple[str, ...]:
    """The difference in a few lines: what was made or removed, else each changed field (for
    flags: per environment, "production: turned on", "production: rules: 1 → 2 item(s)")."""
    if not isinstance(before, Mapping) and isinstance(after, Mapping):
        return (f"created the {kind}",)
    if isinstance(before, Mapping) and not isinstance(after, Mapping):
        return (f"deleted the {kind}",)
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return ()
    lines = flag_summary(before, after) if kind == "flag" else other_summary(before, after)
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"and {len(lines) - MAX_LINES} more change(s)"]
    return tuple(lines)


def place_of(resource: str) -> tuple[str | None, str | None, str | None]:
    """Project, environment and key named by a resource (`proj/p:env/e:flag/k`)."""
    parts = dict(part.split(";", 1)[0].split("/", 1) for part in resource.split(":") if "/" in part)
    key = parts.get("flag") or parts.get("segment")
    environment = parts.get("env")
    return parts.get("proj"), None if environment == "*" else environment, key


def ui_link(
    ui_base: str,
    kind: str,
    project: str | None,
    environment: str | None,
    key: str | None,
    fallback_environment: str | None,
) -> str:
    """The resource's page in the UI (`/ui/#/p/P/e/E/flags/K`), else the project's audit log,
    else the UI's start."""
    where = environment or fallback_environment
    if project is None or where is None:
        return f"{ui_base}/ui/"
    page = {"flag": "flags", "segment": "segments"}.get(kind)
    if page and key:
        return f"{ui_base}/ui/#/p/{project}/e/{where}/{page}/{key}"
    return f"{ui_base}/ui/#/p/{project}/e/{where}/audit"


def facts_of(
    entry: Mapping[str, Any], *, ui_base: str, fallback_environment: str | None
) -> ChangeFacts:
    """The facts of an entry in LaunchDarkly's shape (`GET /api/v2/auditlog/{id}`)."""
    resources = entry["target"]["resources"]
    project, environment, key = place_of(resources[0]) if resources else (None, None, None)
    delta = entry.get("delta") or {}
    kind = str(entry["kind"])
    return ChangeFacts(
        who=str(entry["token"]["name"]),
        title=str(entry["title"]),
        kind=kind,
        project=project,
        environment=environment,
        key=key,
        comment=entry.get("comment"),
        summary=summary_of(kind, delta.get("before"), delta.get("after")),
        link=ui_link(ui_base, kind, project, environment, key, fallback_environment),
        entry_id=str(entry["_id"]),
        date=int(entry["date"]),
    )


def escaped(text: str) -> str:
    """Slack's mrkdwn reads `&`, `<` and `>` as markup: they are sent as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text[:MAX_TEXT]}


def slack_message(facts: ChangeFacts) -> dict[str, Any]:
    """An incoming-webhook body: `text` (the notification's fallback) and Block Kit `blocks`."""
    fields = [
        _mrkdwn(f"*{label}*\n{escaped(value)}")
        for label, value in (
            ("Who", facts.who),
            ("What", f"{facts.kind} {facts.key}" if facts.key else facts.kind),
            ("Project", facts.project),
            ("Environment", facts.environment),
        )
        if value
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": _mrkdwn(escaped(facts.title))},
        {"type": "section", "fields": fields},
    ]
    if facts.summary:
        lines = "\n".join(f"• {escaped(line)}" for line in facts.summary)
        blocks.append({"type": "section", "text": _mrkdwn(f"*Changes*\n{lines}")})
    if facts.comment:
        blocks.append(
            {"type": "context", "elements": [_mrkdwn(f"Comment: {escaped(facts.comment)}")]}
        )
    blocks.append(
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Open in Flagstaff"},
                    "url": facts.link,
                }
            ],
        }
    )
    return {"text": facts.title[:MAX_TEXT], "blocks": blocks}


def generic_message(facts: ChangeFacts) -> dict[str, Any]:
    """Flagstaff's generic JSON: the same facts, one field each, and the entry's address."""
    return {
        "kind": "flagstaff.change",
        "auditLogEntryId": facts.entry_id,
        "date": facts.date,
        "who": facts.who,
        "title": facts.title,
        "resourceKind": facts.kind,
        "project": facts.project,
        "environment": facts.environment,
        "key": facts.key,
        "comment": facts.comment,
        "summary": list(facts.summary),
        "link": facts.link,
    }
