"""The statistics engine is pure: it imports only arithmetic (the standard library's pure
modules and scipy) and never reads a clock, a random source, a file or the network."""

from __future__ import annotations

import ast
from pathlib import Path

import flagstaff_stats
from support.purity import attribute_uses, imported_modules

ALLOWED = frozenset(
    {
        "__future__",
        "collections",
        "dataclasses",
        "enum",
        "functools",
        "math",
        "operator",
        "typing",
        "scipy",
    }
)
FORBIDDEN_ATTRIBUTES = ("now", "utcnow", "today", "time", "random", "urandom", "default_rng")

PACKAGE = Path(flagstaff_stats.__file__).parent


def test_engine_imports_only_arithmetic() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 10
    for module in modules:
        foreign = imported_modules(module) - ALLOWED - {"flagstaff_stats"}
        assert not foreign, f"{module.name} imports {sorted(foreign)}"


def test_engine_never_reads_a_clock_or_draws_random_numbers() -> None:
    assert attribute_uses(sorted(PACKAGE.glob("*.py")), FORBIDDEN_ATTRIBUTES) == []


def test_scipy_is_used_only_for_special_functions_and_quadrature() -> None:
    for module in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "scipy":
                assert {alias.name for alias in node.names} <= {"special", "integrate"}, module.name


def test_purity_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom time import monotonic\nfrom flagstaff_stats import welch\n")
    assert imported_modules(bad) - ALLOWED - {"flagstaff_stats"} == {"os", "time"}
