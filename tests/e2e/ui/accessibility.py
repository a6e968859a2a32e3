"""axe-core over a page in the browser tests: the engine that npm's `@axe-core/playwright` pins
(tests/e2e/browser/package.json, installed by `make browser-deps`), injected into the page and
run with the WCAG 2.x A/AA rules. Serious and critical findings fail the test; a page's
performance entries give its cumulative layout shift."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from support.prerequisites import REPO_ROOT, missing_prerequisite

AXE_SOURCE = REPO_ROOT / "tests" / "e2e" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = frozenset({"serious", "critical"})
RULE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


@cache
def axe_source(path: Path = AXE_SOURCE) -> str:
    if not path.exists():
        missing_prerequisite(f"{path} is missing (make browser-deps installs it)")
    return path.read_text(encoding="utf-8")


def blocking_violations(page: Any) -> list[str]:
    """One line per serious or critical axe violation on the page as it is now: rule, impact and
    the first few offending elements. `evaluate` runs outside the page's CSP, which forbids
    injected scripts."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    result = page.evaluate(
        """async (tags) => {
            const answer = await window.axe.run(document, {runOnly: {type: 'tag', values: tags}});
            return answer.violations.map((v) => ({
                id: v.id, impact: v.impact, help: v.help,
                targets: v.nodes.slice(0, 4).map(
                    (n) => n.target.join(' ') + ': ' + n.failureSummary),
            }));
        }""",
        RULE_TAGS,
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — " + " | ".join(v["targets"])
        for v in result
        if v["impact"] in BLOCKING
    ]


def watch_layout_shifts(context: Any) -> None:
    """Before any page of the context loads: collect layout-shift entries not caused by input."""
    context.add_init_script(
        """window.__shifts = [];
        new PerformanceObserver((list) => {
            for (const entry of list.getEntries()) {
                if (!entry.hadRecentInput) window.__shifts.push({value: entry.value,
                    sources: (entry.sources || []).map((s) => s.node
                        ? (s.node.id || s.node.className || s.node.nodeName) : '?')});
            }
        }).observe({type: 'layout-shift', buffered: true});"""
    )


def layout_shifts(page: Any) -> tuple[float, list[Any]]:
    """The page's cumulative layout shift so far and the entries making it up."""
    entries: list[Any] = page.evaluate("() => window.__shifts || []")
    return sum(float(e["value"]) for e in entries), entries
