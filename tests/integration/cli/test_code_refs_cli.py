"""`flagstaff code-refs` against a real management API under uvicorn, on a git repository the
test builds: flag keys in Python, TypeScript, Go, Kotlin and YAML, found with their aliases
(camelCase, UPPER_SNAKE, a literal alias and one defined in code by a file pattern), ignored and
binary files left out, uploaded in LaunchDarkly's shapes, and an extinction recorded when a key
vanishes from the default branch. Bad input ends with one line and a non-zero exit."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.cli import main
from flagstaff_server.http.api.application import build_api
from support.in_process import control_plane
from support.threaded_servers import serve_in_thread

TOKEN = "code-refs-cli-token"
PROJECT = "shop"
KEYS = ("new-checkout", "summer-banner", "dark-mode", "search-v2", "removed-flag", "never-used")

FILES = {
    ".gitignore": "build/\n",
    ".flagstaff/coderefs.toml": (
        "contextLines = 1\n"
        "[aliases]\n"
        'conventions = ["camelcase", "uppersnakecase"]\n'
        'literal = { "dark-mode" = ["isDarkTheme"] }\n'
        "[[aliases.filePattern]]\n"
        'paths = ["src/flags.py"]\n'
        "patterns = ['(\\w+) = \"FLAG_KEY\"']\n"
    ),
    "src/checkout.py": (
        "def pay(client, context):\n"
        '    if client.variation("new-checkout", context, False):\n'
        "        return new_flow()\n"
        "    return old_flow()\n"
    ),
    "src/flags.py": 'SEARCH_FLAG = "search-v2"\n',
    "src/search.py": (
        "from flags import SEARCH_FLAG\n\n\ndef search(q):\n    return enabled(SEARCH_FLAG)\n"
    ),
    "web/app.ts": (
        "const show = ldClient.variation('summer-banner', false);\n"
        "// flags arrive camelCased from the React SDK\n"
        "if (flags.newCheckout) { render(); }\n"
    ),
    "go/main.go": (
        'package main\n\nfunc main() {\n\tclient.BoolVariation("dark-mode", ctx, false)\n}\n'
    ),
    "android/Theme.kt": "val dark = if (isDarkTheme) DARK_MODE else LIGHT\n",
    "deploy/values.yaml": "flags:\n  - removed-flag\n",
    "docs/notes.md": "new-checkout-v2 is a different thing, and so is xdark-mode.\n",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop-app"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "build").mkdir()
    (root / "build/bundle.js").write_text("variation('summer-banner')\n")  # ignored by git
    (root / "assets").mkdir()
    (root / "assets/logo.bin").write_bytes(b"\x89PNG\0\0dark-mode\0")  # binary: skipped
    commit(root, "first")
    return root


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[httpx.Client]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("FLAGSTAFF_TOKEN", raising=False)
    plane = control_plane(InMemoryStore(), admin_token=TOKEN)
    with (
        serve_in_thread(build_api(plane, version="test"), what="the API", stop_timeout=10) as app,
        httpx.Client(base_url=app.url, headers={"Authorization": TOKEN}) as client,
    ):
        made = client.post("/api/v2/projects", json={"key": PROJECT, "name": "Shop"})
        assert made.status_code == 201, made.text
        for key in KEYS:
            flag = client.post(f"/api/v2/flags/{PROJECT}", json={"key": key, "name": key})
            assert flag.status_code == 201, flag.text
        yield client


def code_refs(
    api: httpx.Client, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(["code-refs", *argv, "--url", str(api.base_url), "--token", TOKEN])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def found(references: list[dict[str, Any]]) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(r["path"], h["flagKey"], tuple(h["aliases"])) for r in references for h in r["hunks"]}


EXPECTED = {
    ("src/checkout.py", "new-checkout", ()),
    ("web/app.ts", "summer-banner", ()),
    ("web/app.ts", "new-checkout", ("newCheckout",)),
    ("go/main.go", "dark-mode", ()),
    ("android/Theme.kt", "dark-mode", ("DARK_MODE", "isDarkTheme")),
    ("src/flags.py", "search-v2", ("SEARCH_FLAG",)),
    ("src/search.py", "search-v2", ("SEARCH_FLAG",)),
    ("deploy/values.yaml", "removed-flag", ()),
}


def test_keys_and_aliases_in_several_languages_are_found_and_uploaded(
    api: httpx.Client, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = code_refs(
        api, capsys, "--dir", str(repo), "-p", PROJECT, "--dry-run", "-o", "json"
    )
    assert code == 0, err
    dry = json.loads(out)
    assert found(dry["references"]) == EXPECTED
    assert dry["filesSkipped"] == 1  # the binary; build/ is ignored, so never listed
    assert api.get("/api/v2/code-refs/repositories").json()["items"] == []  # dry run: no writes

    code, out, err = code_refs(api, capsys, "--dir", str(repo), "-p", PROJECT)
    assert code == 0, err
    assert "5 flags in 7 files of shop-app@main uploaded" in out
    assert "never-used" not in out
    repository = api.get("/api/v2/code-refs/repositories/shop-app").json()
    assert repository["defaultBranch"] == "main"
    branch = api.get("/api/v2/code-refs/repositories/shop-app/branches/main").json()
    assert branch["head"] == git(repo, "rev-parse", "HEAD")
    assert found(branch["references"]) == EXPECTED
    (checkout,) = [r for r in branch["references"] if r["path"] == "src/checkout.py"]
    (hunk,) = checkout["hunks"]
    assert hunk["startingLineNumber"] == 1  # one context line either side of line 2
    assert hunk["lines"].splitlines() == FILES["src/checkout.py"].splitlines()[:3]
    assert checkout["hint"] == "py"
    usage = api.get(f"/api/v2/code-refs/usage/{PROJECT}/dark-mode").json()
    assert {r["path"] for r in usage["repositories"][0]["references"]} == {
        "go/main.go",
        "android/Theme.kt",
    }
    never = api.get(f"/api/v2/code-refs/usage/{PROJECT}/never-used").json()
    assert never["repositories"] == []
    assert never["scannedRepositories"] == ["shop-app"]

    (repo / "deploy/values.yaml").write_text("flags: []\n")
    sha = commit(repo, "drop removed-flag")
    code, out, err = code_refs(api, capsys, "--dir", str(repo), "-p", PROJECT)
    assert code == 0, err
    assert "extinct: shop/removed-flag" in out
    events = api.get("/api/v2/code-refs/extinctions", params={"projKey": PROJECT}).json()["items"]
    assert list(events) == ["removed-flag"]
    assert events["removed-flag"][0]["revision"] == sha
    assert events["removed-flag"][0]["message"] == "drop removed-flag"
    # a scan of another branch never records extinctions
    git(repo, "checkout", "-qb", "feature/x")
    (repo / "web/app.ts").write_text("nothing\n")
    commit(repo, "feature")
    code, _, err = code_refs(api, capsys, "--dir", str(repo), "-p", PROJECT)
    assert code == 0, err
    events = api.get("/api/v2/code-refs/extinctions").json()["items"]
    assert list(events) == ["removed-flag"]
    feature = api.get("/api/v2/code-refs/repositories/shop-app/branches/feature%2Fx").json()
    assert "web/app.ts" not in {r["path"] for r in feature["references"]}


def test_bad_input_is_one_line_and_a_non_zero_exit(
    api: httpx.Client, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = [
        (("--dir", str(tmp_path / "missing")), "no such directory"),
        (("--dir", str(plain)), "git"),
        (("--dir", str(repo), "--context-lines", "9"), "--context-lines"),
        (("--dir", str(repo), "-p", "nope"), "404"),
    ]
    bad_config = tmp_path / "bad.toml"
    bad_config.write_text('[aliases]\nconventions = ["shoutcase"]\n')
    cases.append((("--dir", str(repo), "--config", str(bad_config)), "aliases.conventions"))
    for argv, expected in cases:
        code, _, err = code_refs(api, capsys, *argv)
        assert code != 0, argv
        lines = err.strip().splitlines()
        assert len(lines) == 1, (argv, err)
        assert expected in lines[0], (argv, err)
    assert api.get("/api/v2/code-refs/repositories").json()["items"] == []
