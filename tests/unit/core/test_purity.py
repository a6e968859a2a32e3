"""The evaluation core imports nothing outside a short list of pure standard-library modules."""

from __future__ import annotations

from pathlib import Path

import flagstaff_core
from support.purity import attribute_uses, imported_modules

# Pure computation only: no I/O, clock, threads, logging, randomness, subprocesses or network.
ALLOWED = frozenset(
    {
        "__future__",
        "collections",
        "dataclasses",
        "datetime",  # calendar arithmetic on parsed dates only; `now()` is checked below
        "enum",
        "functools",
        "hashlib",
        "hmac",
        "json",
        "re",
        "re2",  # google-re2: linear-time `matches`; its C++ error log is switched off (pattern.py)
        "struct",
        "typing",
    }
)
FORBIDDEN_CALLS = ("now", "utcnow", "today", "time", "random", "urandom")

PACKAGE = Path(flagstaff_core.__file__).parent


def test_core_imports_only_pure_standard_library_modules() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 10
    for module in modules:
        foreign = imported_modules(module) - ALLOWED - {"flagstaff_core"}
        assert not foreign, f"{module.name} imports {sorted(foreign)}"


def test_core_never_reads_the_clock() -> None:
    assert attribute_uses(sorted(PACKAGE.glob("*.py")), FORBIDDEN_CALLS) == []


def test_purity_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom socket import socket\nfrom flagstaff_core import evaluate\n")
    assert imported_modules(bad) - ALLOWED - {"flagstaff_core"} == {"os", "socket"}
