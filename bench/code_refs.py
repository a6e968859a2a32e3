"""`flagstaff code-refs`' scan beside `git grep` for the same strings, in the same run, on a
generated git repository (50,000 files by default; docs/code-references.md, "Benchmark").

    .venv/bin/python -m bench.code_refs [--files 50000] [--keys 1000] [--rounds 3] [--keep DIR]

The repository: files of generated code (about 1 KiB each, in directories of 100), 2% of them
referencing a flag key or one of its aliases, plus 50 binary files; committed with git. Three
measurements, each best of `--rounds`, alternating so both see the same page cache:

- keys only: `scan` with no alias conventions, beside `git grep -n -F -f keys` (default threads)
  and `git grep --threads 1` (the scan runs on one core).
- keys and the default aliases (camelCase, snake_case, UPPER_SNAKE: 4 strings per key), beside
  `git grep -F` of the same strings.

`git grep` only prints matching lines: it checks no word boundaries and builds no hunks, so it is
a floor for reading and matching, not the same work. Reported as ratios (scan / git grep).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from flagstaff_server.code_refs.aliases import DEFAULT_CONVENTIONS, aliases_of
from flagstaff_server.code_refs.config import ScanConfig
from flagstaff_server.code_refs.scan import scan

PROJECT = "bench"
WORDS = ("cart", "price", "user", "order", "render", "session", "total", "queue", "banner")


def flag_keys(count: int) -> list[str]:
    return [f"{WORDS[i % len(WORDS)]}-flow-{i:04d}" for i in range(count)]


def filler(rng: random.Random, lines: int) -> str:
    out = []
    for n in range(lines):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        out.append(f"    {a}_{n} = compute_{b}({a}, {rng.randint(0, 9999)})  # {b} step")
    return "\n".join(out) + "\n"


def build_repository(root: Path, files: int, keys: list[str], seed: int = 7) -> int:
    """Write and commit the repository; the number of files that reference a key."""
    rng = random.Random(seed)
    referencing = 0
    for index in range(files):
        directory = root / f"pkg{index // 100:04d}"
        if index % 100 == 0:
            directory.mkdir(parents=True)
        body = f"def handler_{index}(client, context):\n" + filler(rng, 24)
        if rng.random() < 0.02:
            referencing += 1
            key = rng.choice(keys)
            use = rng.choice(
                [
                    f'client.variation("{key}", context, False)',
                    aliases_of(key, DEFAULT_CONVENTIONS)[0],
                ]
            )
            body += f"    if {use}:\n        return 1\n"
        (directory / f"mod{index % 100:03d}.py").write_text(body)
    assets = root / "assets"
    assets.mkdir()
    for index in range(50):
        (assets / f"img{index}.bin").write_bytes(b"\x89PNG\0" + rng.randbytes(4096))
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "gen"],
        check=True,
    )
    return referencing


def timed(run: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def git_grep(root: Path, patterns: Path, threads: int | None) -> set[str]:
    argv = ["git", "-C", str(root), "grep", "-n", "-I", "-F", "-f", str(patterns)]
    if threads is not None:
        argv[4:4] = ["--threads", str(threads)]
    done = subprocess.run(argv, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr.decode())
    return {line.split(b":", 1)[0].decode() for line in done.stdout.splitlines()}


def measure(
    root: Path, keys: list[str], conventions: tuple[str, ...], rounds: int, single: bool = True
) -> dict[str, object]:
    config = ScanConfig(conventions=conventions, context_lines=2)
    strings = sorted({s for k in keys for s in [k, *aliases_of(k, conventions)]})
    patterns = root.parent / "patterns.txt"
    patterns.write_text("\n".join(strings) + "\n")
    times: dict[str, list[float]] = {"scan": [], "git_grep": [], "git_grep_1_thread": []}
    scanned: set[str] = set()
    grepped: set[str] = set()
    for _ in range(rounds):
        elapsed, result = timed(lambda: scan(root, {PROJECT: keys}, config))
        times["scan"].append(elapsed)
        scanned = {r["path"] for r in result.references}  # type: ignore[attr-defined]
        elapsed, found = timed(lambda: git_grep(root, patterns, None))
        times["git_grep"].append(elapsed)
        grepped = found  # type: ignore[assignment]
        if single:
            elapsed, _ = timed(lambda: git_grep(root, patterns, 1))
            times["git_grep_1_thread"].append(elapsed)
    times = {name: values for name, values in times.items() if values}
    best = {name: min(values) for name, values in times.items()}
    return {
        "strings": len(strings),
        "best_seconds": {k: round(v, 3) for k, v in best.items()},
        "median_seconds": {k: round(statistics.median(v), 3) for k, v in times.items()},
        "ratio_scan_to_git_grep": round(best["scan"] / best["git_grep"], 2),
        "ratio_scan_to_git_grep_1_thread": (
            round(best["scan"] / best["git_grep_1_thread"], 2) if single else None
        ),
        "files_with_references": len(scanned),
        "files_git_grep_matched": len(grepped),
        "scan_files_not_in_git_grep": len(scanned - grepped),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="build the repository here")
    parser.add_argument("--keys-only", action="store_true", help="skip the alias measurement")
    parser.add_argument(
        "--no-single-thread", action="store_true", help="skip `git grep --threads 1`"
    )
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-code-refs-"))
    root = base / "repo"
    keys = flag_keys(args.keys)
    try:
        if not (root / ".git").exists():
            started = time.perf_counter()
            referencing = build_repository(root, args.files, keys)
            print(
                f"built {args.files} files ({referencing} referencing a key) in "
                f"{time.perf_counter() - started:.1f} s",
                file=sys.stderr,
            )
        version = subprocess.run(["git", "--version"], capture_output=True, text=True)
        report: dict[str, object] = {
            "files": args.files,
            "keys": args.keys,
            "git": version.stdout.strip(),
        }
        runs = (("keys_only", ()), ("keys_and_default_aliases", DEFAULT_CONVENTIONS))
        for name, conventions in runs[:1] if args.keys_only else runs:
            report[name] = measure(root, keys, conventions, args.rounds, not args.no_single_thread)
            print(json.dumps({name: report[name]}), file=sys.stderr, flush=True)  # as it comes
        print(json.dumps(report, indent=2))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
