"""Each Alembic tree (the platform's store and the analytics store) is one linear chain: two
branches landing with the same parent give two heads, and every `upgrade head` then fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from flagstaff_server.adapters.sql import migration as store_migration
from flagstaff_server.ingest import migration as analytics_migration

TREES = {
    "store": store_migration.SCRIPT_LOCATION,
    "analytics": analytics_migration.SCRIPT_LOCATION,
}


def _scripts(location: Path) -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", str(location))
    return ScriptDirectory.from_config(config)


@pytest.mark.parametrize("tree", sorted(TREES))
def test_the_migrations_form_one_line_from_one_base_to_one_head(tree: str) -> None:
    scripts = _scripts(TREES[tree])
    assert len(scripts.get_heads()) == 1, f"{tree}: heads {scripts.get_heads()}"
    assert len(scripts.get_bases()) == 1, f"{tree}: bases {scripts.get_bases()}"
    walked = list(scripts.walk_revisions())
    files = [p for p in (TREES[tree] / "versions").glob("*.py") if p.name != "__init__.py"]
    assert len(walked) == len(files)
    for revision in walked:
        down = revision.down_revision
        assert down is None or isinstance(down, str), f"{tree}: {revision.revision} merges {down}"
