"""The web UI's flag list in headless Chromium for a project of 1,000 flags, beside the same page
for a project of 10 flags in the same run (the peer): a full page load to the router's
`flagstaff:page-ready` mark, the server time inside it (the API requests the page waited for,
from Resource Timing), what the browser spent beyond that, when the whole list was drawn (the
page is ready with its first screenful of rows; the rest follow in the next task), and one
search keystroke's redraw.

Run `python -m bench.ui [--flags 1000] [--loads 15]`; prints medians and p90 and writes
`build/bench/ui.json`. `seed_project` is the 1,000-flag fixture (tags, maintainers, temporary
and permanent flags, a third of them on).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.servers import flagstaff_serve

ADMIN_TOKEN = "bench-ui-admin-token"
OUTPUT = Path("build/bench/ui.json")
CHROMIUM = "/usr/bin/chromium"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
TAGS = ("checkout", "search", "mobile", "billing", "growth", "infra")
MAINTAINERS = ("ana@example.com", "bo@example.com", "chen@example.com", "dee@example.com")

# Timed in the page: the load from navigation start to the router's mark, and how much of it the
# API requests took (their union on the timeline, so parallel requests are not counted twice).
LOAD_FIGURES = """() => {
    const ready = performance.getEntriesByName('flagstaff:page-ready').at(-1).startTime;
    const spans = performance.getEntriesByType('resource')
        .filter((r) => r.name.includes('/api/v2/') && r.responseEnd <= ready)
        .map((r) => [r.requestStart || r.startTime, r.responseEnd]).sort((a, b) => a[0] - b[0]);
    let server = 0, end = 0;
    for (const [from, to] of spans) {
        if (to <= end) continue;
        server += to - Math.max(from, end);
        end = to;
    }
    const list = performance.getEntriesByName('flagstaff:list-drawn').at(-1).startTime;
    return {ready, server, list, rows: document.querySelectorAll('main tbody tr').length};
}"""
SEARCH_FIGURE = """(text) => {
    const box = document.querySelector('main input[type=search]');
    const started = performance.now();
    box.value = text;
    box.dispatchEvent(new Event('input'));
    return {ms: performance.now() - started,
            rows: document.querySelectorAll('main tbody tr').length};
}"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PageFigures:
    flags: int
    loads: int
    ready_p50_ms: float
    ready_p90_ms: float
    server_p50_ms: float
    browser_p50_ms: float
    """Median of (ready - server time) per load: what parsing, scripts and drawing cost."""
    list_p50_ms: float
    """Median time from navigation start to the whole list drawn (every row in the table)."""
    search_p50_ms: float
    rows_shown: int


def seed_project(api: httpx.Client, key: str, count: int) -> None:
    """A project `key` with `count` flags spread over tags, maintainers, lifetimes and on/off."""
    made = api.post("/api/v2/projects", json={"key": key, "name": f"{count} flags"})
    made.raise_for_status()
    for index in range(count):
        flag_key = f"flag-{index:04d}"
        body = {
            "key": flag_key,
            "name": f"Flag {index:04d} {TAGS[index % len(TAGS)]}",
            "description": f"Benchmark flag number {index}",
            "tags": [TAGS[index % len(TAGS)], TAGS[(index * 7) % len(TAGS)]],
            "temporary": index % 4 != 0,
            "maintainerId": MAINTAINERS[index % len(MAINTAINERS)],
        }
        api.post(f"/api/v2/flags/{key}", json=body).raise_for_status()
        if index % 3 == 0:
            api.patch(
                f"/api/v2/flags/{key}/{flag_key}",
                json={"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]},
                headers={"Content-Type": SEMANTIC},
            ).raise_for_status()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure_page(page: Any, url: str, flags: int, loads: int) -> PageFigures:
    ready: list[float] = []
    server: list[float] = []
    browser_side: list[float] = []
    whole_list: list[float] = []
    rows = 0
    for _ in range(loads + 1):  # the first load warms the caches and is not counted
        page.goto("about:blank")
        page.goto(url)
        page.wait_for_function(
            "() => performance.getEntriesByName('flagstaff:list-drawn').length > 0"
        )
        figures = page.evaluate(LOAD_FIGURES)
        ready.append(figures["ready"])
        server.append(figures["server"])
        browser_side.append(figures["ready"] - figures["server"])
        whole_list.append(figures["list"])
        rows = figures["rows"]
    ready, server, browser_side, whole_list = (
        ready[1:],
        server[1:],
        browser_side[1:],
        whole_list[1:],
    )
    searches = [page.evaluate(SEARCH_FIGURE, text)["ms"] for text in ("fl", "flag-0", "", "9")]
    return PageFigures(
        flags=flags,
        loads=loads,
        ready_p50_ms=statistics.median(ready),
        ready_p90_ms=percentile(ready, 0.9),
        server_p50_ms=statistics.median(server),
        browser_p50_ms=statistics.median(browser_side),
        list_p50_ms=statistics.median(whole_list),
        search_p50_ms=statistics.median(searches),
        rows_shown=rows,
    )


def run(flags: int, loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with flagstaff_serve(env={"FLAGSTAFF_ADMIN_TOKEN": ADMIN_TOKEN}, timeout=180) as served:
        headers = {"Authorization": ADMIN_TOKEN}
        with httpx.Client(base_url=served.url, headers=headers, timeout=30) as api:
            seed_project(api, "big", flags)
            seed_project(api, "small", 10)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                signed = context.request.post(
                    f"{served.url}/api/v2/session", data={"token": ADMIN_TOKEN}
                )
                assert signed.ok, signed.text()
                page = context.new_page()
                results = [
                    measure_page(page, f"{served.url}/ui/#/p/{key}/e/production/flags", n, loads)
                    for key, n in (("small", 10), ("big", flags))
                ]
            finally:
                browser.close()
    small, big = results
    return {
        "pages": [asdict(figures) for figures in results],
        "ratios": {
            "ready": big.ready_p50_ms / small.ready_p50_ms,
            "browser": big.browser_p50_ms / small.browser_p50_ms,
            "search": big.search_p50_ms / max(small.search_p50_ms, 0.01),
        },
        "chromium": CHROMIUM,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flags", type=int, default=1000)
    parser.add_argument("--loads", type=int, default=15)
    args = parser.parse_args(argv)
    report = run(args.flags, args.loads)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for figures in report["pages"]:
        print(
            f"{figures['flags']:>5} flags: ready p50 {figures['ready_p50_ms']:.0f} ms "
            f"(p90 {figures['ready_p90_ms']:.0f}), server {figures['server_p50_ms']:.0f} ms, "
            f"browser beyond server {figures['browser_p50_ms']:.0f} ms, "
            f"whole list {figures['list_p50_ms']:.0f} ms, "
            f"search redraw {figures['search_p50_ms']:.1f} ms, {figures['rows_shown']} rows"
        )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratios = report["ratios"]
    print(
        f"1,000 / 10 flags: ready x{ratios['ready']:.2f}, browser x{ratios['browser']:.2f}, "
        f"search x{ratios['search']:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
