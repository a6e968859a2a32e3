"""A scan of a repository for a project's flag keys: aliases from the conventions, the literal
table and the file patterns; one matcher; every tracked file read once; the references in
LaunchDarkly's `ReferenceHunksRep` shape. The only I/O is through `repository`."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flagstaff_server.code_refs.aliases import aliases_of
from flagstaff_server.code_refs.config import CONFIG_PATH, PLACEHOLDER, ScanConfig
from flagstaff_server.code_refs.hunks import hunks_of
from flagstaff_server.code_refs.matcher import Matcher
from flagstaff_server.code_refs.repository import read_text_file, tracked_files

Reference = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanResult:
    references: list[Reference]
    files_read: int
    files_skipped: int
    aliases: dict[str, list[str]]


def pattern_aliases(
    root: Path, config: ScanConfig, keys: Iterable[str], files: list[str]
) -> dict[str, list[str]]:
    """Aliases found by the file patterns: in each pattern's files, group 1 of every match of
    the pattern with `FLAG_KEY` standing for a key."""
    found: dict[str, list[str]] = {}
    # the placeholder as an alternation of every key: one pass per pattern and file
    either = "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))
    for entry in config.file_patterns:
        chosen = [f for f in files if any(fnmatch.fnmatch(f, glob) for glob in entry.paths)]
        texts = [t for t in (read_text_file(root / f) for f in chosen) if t is not None]
        compiled = [
            re.compile(head + f"(?P<flagstaff_key>{either})" + tail)
            for head, _, tail in (p.partition(PLACEHOLDER) for p in entry.patterns)
        ]
        for text in (t.decode("utf-8", errors="replace") for t in texts):
            for pattern in compiled:
                # the pattern's own first group, which may come after the key's
                first = 2 if pattern.groupindex["flagstaff_key"] == 1 else 1
                for match in pattern.finditer(text):
                    alias, key = match.group(first), match.group("flagstaff_key")
                    if alias and alias not in found.setdefault(key, []):
                        found[key].append(alias)
    return found


def build_aliases(
    root: Path, config: ScanConfig, keys: Iterable[str], files: list[str]
) -> dict[str, list[str]]:
    keys = list(keys)
    from_files = pattern_aliases(root, config, keys, files)
    return {
        key: aliases_of(
            key, config.conventions, {key: [*config.literal.get(key, ()), *from_files.get(key, ())]}
        )
        for key in keys
    }


def is_excluded(path: str, config: ScanConfig) -> bool:
    return any(fnmatch.fnmatch(path, glob) for glob in config.exclude)


def scan(root: Path, projects: Mapping[str, Iterable[str]], config: ScanConfig) -> ScanResult:
    """`projects`: each project key with its flag keys. A key in two projects is reported once
    per project."""
    # the configuration names keys for the scan; it is not a use of them
    files = [f for f in tracked_files(root) if f != CONFIG_PATH and not is_excluded(f, config)]
    every_key = sorted({k for keys in projects.values() for k in keys})
    aliases = build_aliases(root, config, every_key, files)
    owners: dict[str, list[str]] = {}
    for project, keys in projects.items():
        for key in keys:
            owners.setdefault(key, []).append(project)
    matcher = Matcher(aliases)
    references: list[Reference] = []
    read = skipped = 0
    for path in files:
        text = read_text_file(root / path)
        if text is None:
            skipped += 1
            continue
        read += 1
        hits = matcher.hits(text)
        if not hits:
            continue
        hunks = []
        for project in sorted(projects):
            chosen = [h for h in hits if any(project in owners[k] for k in h.term.keys)]
            if chosen:
                hunks += [
                    h
                    for h in hunks_of(
                        text, chosen, project=project, context_lines=config.context_lines
                    )
                    if project in owners[h["flagKey"]]
                ]
        if hunks:
            references.append({"path": path, "hint": _hint(path), "hunks": hunks})
    return ScanResult(
        references=references, files_read=read, files_skipped=skipped, aliases=aliases
    )


def _hint(path: str) -> str:
    """The file's extension, which LaunchDarkly's UI uses to choose a highlighter."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1] if "." in name else ""


def referenced_keys(references: Iterable[Reference]) -> set[tuple[str, str]]:
    """(project, flag key) of every hunk."""
    return {(h["projKey"], h["flagKey"]) for r in references for h in r["hunks"]}
