"""The official LaunchDarkly Python SDK as a test oracle: one client per data set, file data source.

Only adapts the SDK's results to plain JSON for comparison; holds no expectations of its own.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from ldclient.impl.integrations.files import file_data_source
from ldclient.integrations import Files

# A value no generated variation has, so the SDK substituting the application default is visible.
DEFAULT = "<application default>"


class OfficialSdk:
    """One loaded data set: `evaluate` wraps `variation_detail`; `client` is there for the rest."""

    def __init__(self, client: LDClient) -> None:
        self.client = client

    def evaluate(self, flag_key: str, context: dict[str, Any]) -> dict[str, Any]:
        """`{"value", "variationIndex", "reason"}` with value None when no variation was chosen."""
        sdk_context = Context.from_dict(context)
        assert sdk_context.valid, f"the SDK rejects the context {context}: {sdk_context.error}"
        detail = self.client.variation_detail(flag_key, sdk_context, DEFAULT)
        value = detail.value
        if detail.variation_index is None:
            assert value == DEFAULT, f"no variation but value {value!r}"
            value = None
        return {"value": value, "variationIndex": detail.variation_index, "reason": detail.reason}


@contextmanager
def load(data: dict[str, Any]) -> Iterator[OfficialSdk]:
    """Start a client on `data` written to a file; fail when the SDK does not accept the file."""
    with tempfile.TemporaryDirectory(prefix="flagstaff-oracle-") as directory:
        path = Path(directory) / "data.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        config = Config(
            "sdk-oracle",
            update_processor_class=Files.new_data_source(paths=[str(path)]),
            send_events=False,
        )
        # With PyYAML importable (another dev dependency brings it) the file source parses JSON as
        # YAML 1.1 in pure Python: most of this test's run time, and `1e+20` would become a string.
        # Its JSON branch is the same data source minus that detour.
        with mock.patch.object(file_data_source, "have_yaml", False):
            client = LDClient(config=config, start_wait=5)
        try:
            # The file source signals readiness even when loading failed; only this tells.
            assert client.is_initialized(), "the official SDK rejected the data file (see its log)"
            yield OfficialSdk(client)
        finally:
            client.close()
