"""What the docs say about the code's own parts, checked against the code: the tables and
migrations docs/storage.md lists, and the modules each part's doc lists in its "owns" table.
A doc that drifts from the code (a table added, a module renamed) fails here."""

from __future__ import annotations

import re

import pytest
from flagstaff_server.adapters.sql import schema
from support.prerequisites import REPO_ROOT

DOCS = REPO_ROOT / "docs"
SERVER = REPO_ROOT / "packages" / "server" / "src" / "flagstaff_server"
MIGRATIONS = SERVER / "adapters" / "sql" / "migrations" / "versions"
ALEMBIC_VERSION_TABLE = "flagstaff_schema_version"

# Each doc's table of modules (first column, in backticks) and the package they live in.
MODULE_TABLES = {
    "delivery.md": SERVER / "delivery",
    "client-delivery.md": SERVER / "delivery",
    "relay.md": SERVER / "relay",
    "break-glass.md": SERVER / "break_glass",
    "sdk.md": REPO_ROOT / "packages" / "sdk" / "src" / "flagstaff_sdk",
}


def section(doc: str, heading: str) -> str:
    """The text of `## heading...` up to the next heading of that level or above."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    start = text.index(f"## {heading}")
    after = re.search(r"^#{1,2} ", text[start + 3 :], flags=re.MULTILINE)
    return text[start : start + 3 + after.start()] if after else text[start:]


def first_column(table_text: str) -> list[str]:
    """The backticked names in the first cell of each body row of a markdown table."""
    names: list[str] = []
    rows = [line.split("|") for line in table_text.splitlines() if line.startswith("|")]
    for cells in rows[2:]:  # past the header and its rule
        names += re.findall(r"`([^`]+)`", cells[1])
    return names


def module_tables(text: str) -> list[str]:
    """The tables whose header's first cell says "module"."""
    tables = re.findall(r"^\|[^\n]*\n(?:\|[^\n]*\n?)+", text, flags=re.MULTILINE)
    return [table for table in tables if table.split("|")[1].strip().startswith("module")]


def test_storage_doc_lists_every_table_of_the_schema() -> None:
    listed = set(first_column(section("storage.md", "Schema")))
    assert listed == {*schema.metadata.tables, ALEMBIC_VERSION_TABLE}


def test_storage_doc_names_the_migrations_up_to_the_last() -> None:
    numbers = sorted(path.name[1:5] for path in MIGRATIONS.glob("v[0-9][0-9][0-9][0-9]_*.py"))
    heading = section("storage.md", "Schema").splitlines()[0]
    named = re.findall(r"`(\d{4})`", heading)  # the first and the last, e.g. `0001` to `0003`
    assert (named[0], named[-1]) == (numbers[0], numbers[-1])


@pytest.mark.parametrize("doc", sorted(MODULE_TABLES))
def test_module_tables_name_modules_that_exist(doc: str) -> None:
    package = MODULE_TABLES[doc]
    tables = module_tables((DOCS / doc).read_text(encoding="utf-8"))
    modules = [name for table in tables for name in first_column(table)]
    assert modules, f"no module table found in {doc}"
    present = {path.stem for path in package.rglob("*.py")} | {
        path.name for path in package.rglob("*") if path.is_dir()
    }
    missing = [name for name in modules if name.rsplit(".", 1)[-1] not in present]
    assert missing == [], f"{doc} names modules {package} does not have"
