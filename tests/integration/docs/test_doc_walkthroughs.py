"""The shell walk-throughs of the docs, run as written: the `sh` blocks are read from the markdown
itself, run with bash against a real `flagstaff serve` seeded the way `make run` seeds it, and the
answers the text promises are checked, so a walk-through that drifts from the server fails here.

curl runs through a recorder that passes every answer through unchanged and keeps its method,
status and body for the checks. Without bash or curl the test fails (never skips): CI must run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from support.deadlines import wait_until
from support.prerequisites import REPO_ROOT
from support.processes import FlagstaffProcess

MANAGEMENT_API_DOC = REPO_ROOT / "docs" / "management-api.md"
MAKE_RUN_ORIGIN = "http://127.0.0.1:8030"
"""Where `make run` listens; the walk-through's one mention of it becomes the test server's URL."""
RUN_TWICE = "<!-- run twice -->"
"""The HTML comment, on the line before a block, of a block the reader is told to run again."""
SCRIPT_TIMEOUT_SECONDS = 120.0

# Stands in for curl on PATH: the real curl with the doc's own arguments, its answer passed through
# unchanged (pipes in the doc still read it), and each request's method, status, content type, URL
# and body kept in a numbered pair of files for the test.
CURL_RECORDER = """#!/usr/bin/env bash
set -u
n=$(printf '%03d' "$(find "$DOC_CURL_RECORDS" -name '*.meta' | wc -l)")
status=0
"$DOC_REAL_CURL" "$@" --output "$DOC_CURL_RECORDS/$n.body" \\
  --write-out '%{method}\\t%{http_code}\\t%{content_type}\\t%{url_effective}' \\
  > "$DOC_CURL_RECORDS/$n.meta" || status=$?
cat "$DOC_CURL_RECORDS/$n.body" 2>/dev/null
exit "$status"
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ShellBlock:
    """One fenced `sh` block of a markdown section."""

    text: str
    run_twice: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """One request a walk-through's curl made, and what the server answered."""

    method: str
    target: str
    """Path and query, as the doc wrote them after `$API` was expanded."""
    status: int
    content_type: str
    body: Any


@dataclass(kw_only=True)
class MakeRunServer(FlagstaffProcess):
    """`flagstaff serve` as `make run` starts it (demo project and admin token on the first start),
    on a free port, without the test run's FLAGSTAFF_ variables."""

    name: str = "make-run"
    inherit_flagstaff_variables: bool = False

    def arguments(self) -> list[str]:
        return [
            "serve",
            *("--data-dir", str(self.data_dir), "--port", str(self.port)),
            *("--shutdown-seconds", "1"),
        ]


def section_shell_blocks(markdown: Path, heading: str) -> list[ShellBlock]:
    """The `sh` blocks under `heading` (a whole line, such as `## Try it with curl`) up to the next
    heading of the same or a higher level, in order."""
    lines = markdown.read_text(encoding="utf-8").splitlines()
    if heading not in lines:
        raise AssertionError(f"{markdown.name} has no heading {heading!r}")
    level = heading.split(" ", 1)[0]
    start = lines.index(heading) + 1
    blocks: list[ShellBlock] = []
    index = start
    while index < len(lines):
        line = lines[index]
        if line.startswith("#") and len(line.split(" ", 1)[0]) <= len(level):
            break
        if line.startswith("```"):
            end = lines.index("```", index + 1)
            if line.strip() == "```sh":
                previous = lines[index - 1].strip() if index > start else ""
                text = "\n".join(lines[index + 1 : end]) + "\n"
                blocks.append(ShellBlock(text=text, run_twice=previous == RUN_TWICE))
            index = end
        index += 1
    return blocks


def required_program(name: str) -> str:
    """The path of a program the walk-throughs run; a failure (not a skip) when it is missing."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"{name} is not installed: the docs' walk-throughs run it (apt-get install {name})"
        )
    return path


def walkthrough_script(blocks: list[ShellBlock], url: str) -> str:
    """One bash script running the blocks in order (a run-twice block twice), aimed at `url`."""
    runs = [block.text for block in blocks for _ in range(2 if block.run_twice else 1)]
    script = "\n".join(runs)
    mentions = script.count(MAKE_RUN_ORIGIN)
    assert mentions == 1, f"expected the walk-through to name {MAKE_RUN_ORIGIN} once: {mentions}"
    return "set -euo pipefail\n" + script.replace(MAKE_RUN_ORIGIN, url)


def run_walkthrough(script: str, *, workdir: Path, bash: str, real_curl: str) -> list[Answer]:
    """Run `script` with `bash` in `workdir` (where `data/` is the server's data directory, as in
    the repository root after `make run`), with `real_curl` recorded; the answers in order."""
    records = workdir / "curl-records"
    records.mkdir()
    recorder_bin = workdir / "recorder-bin"
    recorder_bin.mkdir()
    recorder = recorder_bin / "curl"
    recorder.write_text(CURL_RECORDER)
    recorder.chmod(0o755)
    environment = {
        **os.environ,
        "PATH": f"{recorder_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "DOC_REAL_CURL": real_curl,
        "DOC_CURL_RECORDS": str(records),
    }
    result = subprocess.run(
        [bash, "-c", script],
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_SECONDS,
        check=False,
    )
    assert result.returncode == 0, (
        f"the walk-through failed with exit {result.returncode}\n"
        f"stderr: {result.stderr}\nstdout (end): {result.stdout[-2000:]}"
    )
    return [read_answer(meta) for meta in sorted(records.glob("*.meta"))]


def read_answer(meta: Path) -> Answer:
    method, status, content_type, url = meta.read_text().split("\t")
    parts = urlsplit(url)
    body_text = meta.with_suffix(".body").read_text()
    return Answer(
        method=method,
        target=parts.path + (f"?{parts.query}" if parts.query else ""),
        status=int(status),
        content_type=content_type,
        body=json.loads(body_text) if body_text else None,
    )


@pytest.mark.slow
def test_management_api_curl_walkthrough_answers_as_the_doc_says(tmp_path: Path) -> None:
    blocks = section_shell_blocks(MANAGEMENT_API_DOC, "## Try it with curl")
    assert [block.run_twice for block in blocks].count(True) == 1, "one block is run twice"
    bash, curl = required_program("bash"), required_program("curl")
    server = MakeRunServer(data_dir=tmp_path / "data")
    server.start()
    try:
        script = walkthrough_script(blocks, server.url)
        answers = run_walkthrough(script, workdir=tmp_path, bash=bash, real_curl=curl)
        flags = "/api/v2/flags/demo"
        evaluate = "/api/v2/projects/demo/environments/production/flags/evaluate"
        assert [(a.method, a.target, a.status) for a in answers] == [
            ("GET", f"{flags}?env=production", 200),
            ("POST", flags, 201),
            ("PATCH", f"{flags}/dark-mode", 200),  # the JSON Patch ...
            ("PATCH", f"{flags}/dark-mode", 409),  # ... run again
            ("GET", f"{flags}/dark-mode", 200),  # the variation id
            ("PATCH", f"{flags}/dark-mode", 200),  # the semantic patch
            ("POST", evaluate, 200),
            ("POST", flags, 400),
        ]
        token = (tmp_path / "data" / "admin-token").read_text().strip()
        audit = httpx.get(
            f"{server.url}/api/v2/auditlog",
            params={"spec": "proj/demo:env/*:flag/dark-mode"},
            headers={"Authorization": token},
        ).json()
        environment = httpx.get(
            f"{server.url}/api/v2/projects/demo/environments/production",
            headers={"Authorization": token},
        ).json()

        # "every change reaches SDKs through the change feed at once"
        def sdk_sees_the_semantic_patch() -> bool:
            sdk_flags = httpx.get(
                f"{server.url}/sdk/latest-all", headers={"Authorization": environment["apiKey"]}
            ).json()["flags"]
            flag = sdk_flags.get("dark-mode", {})
            targets = flag.get("targets", [])
            return flag.get("on") is True and any("ana" in target["values"] for target in targets)

        wait_until(sdk_sees_the_semantic_patch, what="SDKs to see dark-mode on with ana targeted")
    finally:
        server.stop()

    listed, created, patched, conflict, _, semantic, evaluated, refused = answers

    assert listed.body["items"], "the demo project has flags"
    assert all(set(item["environments"]) == {"production"} for item in listed.body["items"])

    # created off in every environment, serving false
    assert set(created.body["environments"]) == {"production", "test"}
    for configuration in created.body["environments"].values():
        assert configuration["on"] is False
        assert created.body["variations"][configuration["offVariation"]]["value"] is False

    assert patched.body["_version"] == 2
    assert patched.body["description"] == "The dark theme"

    assert conflict.content_type.startswith("application/problem+json")
    assert conflict.body["code"] == "optimistic_locking_error"
    assert conflict.body["path"] == "/_version"

    production = semantic.body["environments"]["production"]
    assert production["on"] is True
    assert production["targets"] == [{"values": ["ana"], "variation": 0}]
    assert semantic.body["variations"][0]["value"] is True

    dark_mode = next(item for item in evaluated.body["items"] if item["key"] == "dark-mode")
    assert dark_mode["_value"] is True
    assert dark_mode["reason"]["kind"] == "TARGET_MATCH"

    assert refused.content_type.startswith("application/problem+json")
    assert refused.body["status"] == 400
    assert refused.body["code"] == "invalid_request"
    assert refused.body["path"] == "/key"

    # "the audit log shows it with its comment"
    comments = [entry["comment"] for entry in audit["items"]]
    assert "explain it" in comments
    assert "beta" in comments

    # "the admin token `make run` printed and saved": the token the walk-through read is the one
    # in the start banner (read after the stop, once the server's output is flushed)
    banner = server.log_path.read_text(errors="replace")
    assert f"saved to {tmp_path / 'data' / 'admin-token'}): {token}" in banner
