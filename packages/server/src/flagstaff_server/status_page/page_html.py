"""The status page as HTML: the status feed document rendered on the server, with no script, no
external resource (the style sheet is inline, allowed by its hash in the page's CSP) and
accessible markup: one `h1`, a heading per section and region, tables with header cells, and
every state said in words beside its colour and symbol. Readable from 320 to 1280 px: below
640 px each table row becomes a block of labelled lines. Pure: the feed is handed in.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from flagstaff_server.status_page.components import duration

STATE_WORDS: Mapping[str, tuple[str, str]] = {
    "operational": ("\u2713", "Operational"),
    "standby": ("\u25c6", "Standby"),
    "degraded": ("\u25b2", "Degraded"),
    "down": ("\u2715", "Down"),
    "unreachable": ("?", "Unreachable"),
}
"""Each state's symbol (decoration, hidden from screen readers) and its word."""
SEVERITY_WORDS: Mapping[str, str] = {"critical": "Critical", "warning": "Warning", "info": "Info"}

STYLE = """\
:root{--fg:#1b1f23;--muted:#4b5563;--line:#d0d7de;--bg:#fff}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);\
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
.page{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.75rem;line-height:1.2;margin:0 0 12px}
h2{font-size:1.3rem;margin:28px 0 8px;display:flex;flex-wrap:wrap;gap:8px;align-items:center}
h3{font-size:1.05rem;margin:0 0 4px}
p{margin:0 0 8px}
a{color:#0b57d0}
.meta{color:var(--muted);font-size:.9rem}
.banner{border:2px solid;border-radius:8px;padding:12px 16px;font-size:1.1rem;font-weight:600}
.state{display:inline-block;border:1px solid;border-radius:999px;padding:1px 10px;\
font-size:.9rem;font-weight:600;white-space:nowrap}
.s-operational{background:#e6f4ea;color:#0b5d1e;border-color:#2e7d32}
.s-standby{background:#e8f0fe;color:#174ea6;border-color:#1a73e8}
.s-degraded{background:#fef3e0;color:#6d3a00;border-color:#c77700}
.s-down{background:#fde7e7;color:#8c1414;border-color:#c62828}
.s-unreachable{background:#eceff1;color:#263238;border-color:#546e7a;border-style:dashed}
.notice{border-left:6px solid;border-radius:4px;padding:10px 14px;margin:0 0 12px;\
background:#f6f8fa}
.n-critical{border-color:#c62828}
.n-warning{border-color:#c77700}
.n-info{border-color:#1a73e8}
.severity{font-weight:700;text-transform:uppercase;font-size:.8rem;letter-spacing:.04em;\
margin-right:6px}
.message{white-space:pre-line}
time{white-space:nowrap}
table{width:100%;border-collapse:collapse}
caption{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);\
white-space:nowrap}
th,td{text-align:left;vertical-align:top;padding:8px;border-bottom:1px solid var(--line);\
overflow-wrap:break-word}
thead th{border-bottom:2px solid var(--line);font-size:.9rem;color:var(--muted)}
tbody th{font-weight:600;white-space:nowrap}
footer{margin-top:32px;border-top:1px solid var(--line);padding-top:8px}
@media (max-width:640px){
.page{padding:12px}
h1{font-size:1.4rem}
table,thead,tbody,tr,th,td{display:block}
thead tr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
tr{border:1px solid var(--line);border-radius:6px;margin:0 0 10px;padding:6px 10px}
th,td{border:0;padding:3px 0}
tbody th{white-space:normal}
tbody td::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
}
"""
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src '{STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
"""Nothing but the inline style sheet may load: the page needs no script, font or image."""

COMPONENT_COLUMNS = ("Component", "Node", "State", "Details")
FLEET_COLUMNS = (
    "Region",
    "Reported by",
    "Running SDKs",
    "On stale flag data",
    "Stopped",
    "Oldest data",
    "As of",
)


def render(feed: Mapping[str, Any]) -> bytes:
    now_ms = int(feed["generatedAt"])
    node = feed["node"]
    state = str(feed["state"])
    symbol, word = STATE_WORDS.get(state, ("?", state))
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Flagstaff status: {escape(word)}</title>",
        f"<style>{STYLE}</style></head>",
        '<body><div class="page"><header>',
        "<h1>Flagstaff status</h1>",
        f'<p class="banner s-{_cls(state)}"><span aria-hidden="true">{symbol}</span> '
        f"{escape(word)}: {escape(str(feed['summary']))}</p>",
        _delivery_line(feed.get("delivery")),
        f'<p class="meta">As seen by this {escape(_role(str(node["role"])))} node in region '
        f"{escape(str(node['region']))} at {_time(now_ms)}. Reload the page for the latest; "
        'the same as JSON: <a href="/status/feed.json">/status/feed.json</a>.</p>',
        "</header><main>",
        _notices(feed.get("notices") or []),
        *(_region(region, now_ms) for region in feed.get("regions") or []),
        _fleet(feed.get("fleet") or [], now_ms),
        "</main>",
        f'<footer><p class="meta">Flagstaff {escape(str(node["version"]))}. This page is served '
        "by the delivery plane and works while the management API and its database are "
        "down.</p></footer>",
        "</div></body></html>",
    ]
    return "\n".join(part for part in parts if part).encode()


def _delivery_line(delivery: Mapping[str, Any] | None) -> str:
    if delivery is None:
        return ""
    return (
        f"<p>Flag delivery from this node: {_state(str(delivery['state']))}, "
        f"{escape(str(delivery['detail']))}.</p>"
    )


def _notices(notices: Sequence[Mapping[str, Any]]) -> str:
    """The feed lists only unexpired notices, gravest first."""
    heading = '<section aria-labelledby="notices"><h2 id="notices">Notices</h2>'
    if not notices:
        return heading + "<p>No notices from the operators.</p></section>"
    items = [heading]
    for index, notice in enumerate(notices):
        severity = str(notice.get("severity", "info"))
        facts = [f"Posted {_time(int(notice['creationDate']))}"]
        if notice.get("regions"):
            facts.append("Regions: " + ", ".join(escape(str(r)) for r in notice["regions"]))
        else:
            facts.append("All regions")
        if notice.get("expiresAt") is not None:
            facts.append(f"until {_time(int(notice['expiresAt']))}")
        if notice.get("_source") == "signed":
            facts.append("signed by an operator's break-glass key")
        message = str(notice.get("message") or "")
        items.append(
            f'<article class="notice n-{_cls(severity)}" aria-labelledby="notice-{index}">'
            f'<h3 id="notice-{index}"><span class="severity">'
            f"{escape(SEVERITY_WORDS.get(severity, severity))}</span> "
            f"{escape(str(notice['title']))}</h3>"
            + (f'<p class="message">{escape(message)}</p>' if message else "")
            + f'<p class="meta">{" · ".join(facts)}</p></article>'
        )
    items.append("</section>")
    return "".join(items)


def _region(region: Mapping[str, Any], now_ms: int) -> str:
    name = str(region["name"])
    anchor = f"region-{_cls(name)}"
    rows = []
    for component in region.get("components") or []:
        detail = escape(str(component["detail"]))
        seen = component.get("lastSeen")
        if component["state"] == "unreachable" and seen is not None:
            detail += f". Last seen {_time(int(seen))} ({_ago(now_ms - int(seen))})."
        rows.append(
            _row(
                [
                    escape(str(component["name"])),
                    escape(str(component["node"])),
                    _state(str(component["state"])),
                    detail,
                ],
                COMPONENT_COLUMNS,
            )
        )
    title = "Unknown region" if name == "unknown" else f"Region {escape(name)}"
    return (
        f'<section aria-labelledby="{anchor}"><h2 id="{anchor}">{title} '
        f"{_state(str(region['state']))}</h2>"
        + _table(f"Components in {title.lower()}", COMPONENT_COLUMNS, rows)
        + "</section>"
    )


def _fleet(rows: Sequence[Mapping[str, Any]], now_ms: int) -> str:
    heading = '<section aria-labelledby="fleet"><h2 id="fleet">SDK fleet</h2>'
    if not rows:
        return (
            heading + "<p>No ingestion node reports the SDK fleet to this node (it learns of "
            "them through FLAGSTAFF_STATUS_PEERS).</p></section>"
        )
    cells = []
    for row in rows:
        worst = row.get("worstDataAgeMs")
        as_of = row.get("asOf")
        when = (
            "not read yet"
            if as_of is None
            else f"{_time(int(as_of))} ({_ago(now_ms - int(as_of))})"
        )
        if not row.get("reachable"):
            when += "; its node is not answering"
        cells.append(
            _row(
                [
                    escape(str(row["region"])),
                    escape(str(row["node"])),
                    _count(row.get("running")),
                    _count(row.get("stale")),
                    _count(row.get("stopped")),
                    "unknown" if worst is None else duration(int(worst) / 1000),
                    when,
                ],
                FLEET_COLUMNS,
            )
        )
    intro = (
        "<p>SDK instances that reported diagnostics, as the ingestion nodes last counted them; "
        "stale flag data is more than 5 minutes old.</p>"
    )
    return (
        heading
        + intro
        + _table("SDK instances by ingestion node", FLEET_COLUMNS, cells)
        + "</section>"
    )


def _table(caption: str, columns: Iterable[str], rows: list[str]) -> str:
    head = "".join(f'<th scope="col">{escape(c)}</th>' for c in columns)
    return (
        f"<table><caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _row(cells: list[str], columns: Sequence[str]) -> str:
    """The first cell is the row's header; every cell carries its column's label for the
    narrow layout (CSS shows it before the value)."""
    first, *rest = cells
    parts = [f'<th scope="row">{first}</th>']
    parts += [
        f'<td data-label="{escape(label)}">{cell}</td>'
        for label, cell in zip(columns[1:], rest, strict=True)
    ]
    return f"<tr>{''.join(parts)}</tr>"


def _state(state: str) -> str:
    symbol, word = STATE_WORDS.get(state, ("?", state))
    return (
        f'<span class="state s-{_cls(state)}"><span aria-hidden="true">{symbol}</span> '
        f"{escape(word)}</span>"
    )


def _role(role: str) -> str:
    return {"all": "all-in-one", "delivery": "delivery"}.get(role, role)


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "unknown"


def _cls(text: str) -> str:
    """A class or id fragment: letters, digits and '-' only."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower())


def _time(millis: int) -> str:
    try:
        moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return "an unreadable time"
    return (
        f'<time datetime="{moment.isoformat(timespec="seconds")}">'
        + moment.strftime("%Y-%m-%d %H:%M:%S UTC")
        + "</time>"
    )


def _ago(millis: int) -> str:
    return "just now" if millis < 1000 else f"{duration(millis / 1000)} ago"
