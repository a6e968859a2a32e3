"""Reading a pure package's source for what would make it impure: the top-level modules each file
imports, and the attributes it uses that read a clock or a random source. Reads files with `ast`;
runs none of them."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the absolute imports in the file at `path`."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def attribute_uses(modules: Iterable[Path], attributes: Iterable[str]) -> list[str]:
    """`file:line uses .name` for every use of one of `attributes` in `modules`."""
    wanted = set(attributes)
    return [
        f"{module.name}:{node.lineno} uses .{node.attr}"
        for module in modules
        for node in ast.walk(ast.parse(module.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in wanted
    ]
