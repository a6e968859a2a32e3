"""Semantic versions as LaunchDarkly compares them: SemVer 2.0 precedence, missing minor/patch = 0.

Parses to an orderable tuple; build metadata is dropped because it has no precedence. Parsing is
memoised (a pure function of its argument), because the same versions recur in every context.
"""

from __future__ import annotations

import functools
import re

_NUMBER = r"0|[1-9][0-9]*"
_IDENTIFIER = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(
    rf"^(?P<major>{_NUMBER})(?:\.(?P<minor>{_NUMBER}))?(?:\.(?P<patch>{_NUMBER}))?"
    rf"(?:-(?P<pre>{_IDENTIFIER}(?:\.{_IDENTIFIER})*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?\Z",
    re.ASCII,
)

# (major, minor, patch, release-rank, prerelease identifiers); a release outranks any prerelease.
SemverKey = tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]


def parse_semver(value: object) -> SemverKey | None:
    """An orderable key for a semver string, or None when `value` is not one."""
    if type(value) is not str:
        return None
    return parse_semver_text(value)


@functools.lru_cache(maxsize=4096)
def parse_semver_text(text: str) -> SemverKey | None:
    """`parse_semver` for a value already known to be a string."""
    match = _SEMVER.match(text)
    if match is None:
        return None
    minor = match.group("minor")
    patch = match.group("patch")
    pre = match.group("pre")
    identifiers: tuple[tuple[int, int, str], ...] = ()
    if pre is not None:
        # Numeric identifiers sort before alphanumeric ones, numerically among themselves.
        identifiers = tuple(
            (0, int(part), "") if part.isdigit() else (1, 0, part) for part in pre.split(".")
        )
    return (
        int(match.group("major")),
        int(minor or 0),
        int(patch or 0),
        0 if pre is not None else 1,
        identifiers,
    )
