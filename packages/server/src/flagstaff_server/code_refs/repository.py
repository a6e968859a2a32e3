"""The git edge of a scan: the files git tracks (`git ls-files`, so ignored files never appear),
the checked-out commit and branch, and each file's bytes read once. Binary files (a NUL byte in
the first 8,000, git's own test) and files over `MAX_FILE_BYTES` are skipped."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 8 << 20
BINARY_PROBE = 8000


class GitError(RuntimeError):
    """git failed, or the directory is not a git work tree; the message says which."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    sha: str
    branch: str
    """'HEAD' when detached."""
    time_ms: int
    subject: str


def git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, check=False, timeout=300
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} in {root}: {message[0] if message else 'failed'}")
    return done.stdout


def tracked_files(root: Path) -> list[str]:
    """Paths relative to `root`, as git spells them, in git's order."""
    out = git(root, "ls-files", "-z", "--cached")
    return [p.decode("utf-8", errors="surrogateescape") for p in out.split(b"\0") if p]


def head_commit(root: Path) -> Commit:
    sha, branch, stamp, subject = (
        git(root, "log", "-1", "--format=%H%n%D%n%ct%n%s").decode(errors="replace").split("\n")[:4]
    )
    name = git(root, "rev-parse", "--abbrev-ref", "HEAD").decode().strip()
    del branch
    return Commit(sha=sha, branch=name, time_ms=int(stamp) * 1000, subject=subject)


def read_text_file(path: Path) -> bytes | None:
    """The file's bytes, or None for a binary, oversized, missing or unreadable one (a symlink
    or a submodule, which git lists but which hold no text of this repository)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:BINARY_PROBE]:
        return None
    return data
