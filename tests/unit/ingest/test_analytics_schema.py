"""The analytics database's schema comes from its own Alembic chain: opening a store twice
migrates once, the migrated tables match the tables the store queries, and a database made
before the chain existed (tables created directly) is adopted with its rows."""

from __future__ import annotations

from pathlib import Path

from flagstaff_server.ingest import analytics_tables
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.migration import VERSION_TABLE
from sqlalchemy import create_engine, inspect, select


def versions(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.exec_driver_sql(f"SELECT version_num FROM {VERSION_TABLE}")
            return [row[0] for row in rows]
    finally:
        engine.dispose()


def test_opening_a_store_twice_migrates_once_and_keeps_its_data(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    first = AnalyticsStore(url)
    assert first.position("node") == 0
    first.commit("node", [], now_ms=1)
    with first.engine.begin() as connection:
        connection.execute(analytics_tables.positions.insert().values(node="other", seq=7))
    first.close()
    second = AnalyticsStore(url)
    assert second.position("other") == 7
    second.close()
    assert versions(url) == ["a0005"]


def test_the_migrated_tables_are_the_tables_the_store_uses(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    store = AnalyticsStore(url)
    store.position("node")
    found = inspect(store.engine)
    for table in analytics_tables.metadata.sorted_tables:
        columns = {column["name"]: column for column in found.get_columns(table.name)}
        assert set(columns) == {column.name for column in table.columns}, table.name
        for column in table.columns:
            assert columns[column.name]["nullable"] == column.nullable, (table.name, column.name)
        primary = found.get_pk_constraint(table.name)["constrained_columns"]
        assert primary == [column.name for column in table.primary_key.columns], table.name
        indexes = {tuple(index["column_names"]) for index in found.get_indexes(table.name)}
        for index in table.indexes:
            assert tuple(column.name for column in index.columns) in indexes, index.name
    store.close()


def test_a_database_made_before_the_chain_is_adopted_with_its_rows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    engine = create_engine(url)
    analytics_tables.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(analytics_tables.positions.insert().values(node="node", seq=42))
    engine.dispose()
    store = AnalyticsStore(url)
    assert store.position("node") == 42
    with store.engine.connect() as connection:
        assert connection.execute(select(analytics_tables.positions.c.seq)).scalar() == 42
    store.close()
    assert versions(url) == ["a0005"]
