"""The scan's configuration: `.flagstaff/coderefs.toml` in the repository (or `--config FILE`),
read once and checked, each error naming the setting. Pure apart from reading that one file.

    contextLines = 2                       # lines around a reference; -1: send no source lines
    exclude = ["vendor/**", "*.min.js"]    # globs of tracked paths not to read
    [aliases]
    conventions = ["camelcase", "snakecase", "uppersnakecase"]   # the default; [] for none
    literal = { "new-checkout" = ["isCheckoutV2"] }
    [[aliases.filePattern]]                # aliases defined in code: group 1 is the alias
    paths = ["src/flags.py"]
    patterns = ['(\\w+)\\s*=\\s*"FLAG_KEY"']
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagstaff_server.code_refs.aliases import CONVENTIONS, DEFAULT_CONVENTIONS

CONFIG_PATH = ".flagstaff/coderefs.toml"
PLACEHOLDER = "FLAG_KEY"
DEFAULT_CONTEXT_LINES = 2
MAX_CONTEXT_LINES = 5


class ConfigError(ValueError):
    """A setting of the configuration file is wrong; the message names it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FilePattern:
    paths: tuple[str, ...]
    patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanConfig:
    context_lines: int = DEFAULT_CONTEXT_LINES
    exclude: tuple[str, ...] = ()
    conventions: tuple[str, ...] = DEFAULT_CONVENTIONS
    literal: dict[str, tuple[str, ...]] = field(default_factory=dict)
    file_patterns: tuple[FilePattern, ...] = ()


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be an array of non-empty strings")
    return tuple(value)


def parse_config(document: dict[str, Any], where: str = CONFIG_PATH) -> ScanConfig:
    known = {"contextLines", "exclude", "aliases"}
    for name in document:
        if name not in known:
            raise ConfigError(f"{where}: unknown setting {name!r}")
    context = document.get("contextLines", DEFAULT_CONTEXT_LINES)
    if (
        isinstance(context, bool)
        or not isinstance(context, int)
        or not -1 <= context <= MAX_CONTEXT_LINES
    ):
        raise ConfigError(f"{where}: contextLines is a whole number from -1 to {MAX_CONTEXT_LINES}")
    aliases = document.get("aliases", {})
    if not isinstance(aliases, dict):
        raise ConfigError(f"{where}: aliases must be a table")
    for name in aliases:
        if name not in {"conventions", "literal", "filePattern"}:
            raise ConfigError(f"{where}: unknown setting aliases.{name}")
    conventions = _strings(
        aliases.get("conventions", list(DEFAULT_CONVENTIONS)), "aliases.conventions"
    )
    for convention in conventions:
        if convention not in CONVENTIONS:
            raise ConfigError(
                f"{where}: aliases.conventions: {convention!r} is not one of "
                f"{', '.join(CONVENTIONS)}"
            )
    literal_table = aliases.get("literal", {})
    if not isinstance(literal_table, dict):
        raise ConfigError(f"{where}: aliases.literal must be a table of key = [aliases]")
    literal = {k: _strings(v, f"aliases.literal.{k}") for k, v in literal_table.items()}
    patterns: list[FilePattern] = []
    given = aliases.get("filePattern", [])
    if not isinstance(given, list):
        raise ConfigError(f"{where}: aliases.filePattern must be an array of tables")
    for index, entry in enumerate(given):
        at = f"aliases.filePattern[{index}]"
        if not isinstance(entry, dict) or set(entry) - {"paths", "patterns"}:
            raise ConfigError(f"{where}: {at} has only paths and patterns")
        texts = _strings(entry.get("patterns"), f"{at}.patterns")
        for text in texts:
            if PLACEHOLDER not in text:
                raise ConfigError(f"{where}: {at}.patterns: {text!r} lacks {PLACEHOLDER}")
            try:
                compiled = re.compile(text.replace(PLACEHOLDER, "key"))
            except re.error as exc:
                raise ConfigError(f"{where}: {at}.patterns: {text!r}: {exc}") from exc
            if compiled.groups < 1:
                raise ConfigError(f"{where}: {at}.patterns: {text!r} needs a group for the alias")
        patterns.append(
            FilePattern(paths=_strings(entry.get("paths"), f"{at}.paths"), patterns=texts)
        )
    return ScanConfig(
        context_lines=context,
        exclude=_strings(document.get("exclude", []), "exclude"),
        conventions=conventions,
        literal=literal,
        file_patterns=tuple(patterns),
    )


def load_config(root: Path, explicit: Path | None = None) -> ScanConfig:
    """The explicit file, else the repository's `.flagstaff/coderefs.toml`, else the defaults."""
    path = explicit if explicit is not None else root / CONFIG_PATH
    if not path.is_file():
        if explicit is not None:
            raise ConfigError(f"no configuration file {explicit}")
        return ScanConfig()
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return parse_config(document, str(path))
