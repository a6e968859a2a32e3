"""A signed notice with the control plane down, real processes: the API killed and its database
stopped, an operator signs a notice with the break-glass key (`flagstaff killswitch
sign-notice`) and pushes it to the delivery node, which shows it on its status page and forwards
it to the relay, whose page shows it too; a tampered copy is refused and shown nowhere. When the
database and the API are back, the delivery node has recorded the notice in the audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flagstaff_server.cli import main
from status_page_support import ADMIN, feed, platform
from support import management
from support.deadlines import wait_until
from support.processes import FlagstaffProcess

pytestmark = [pytest.mark.service, pytest.mark.slow]

SETTLE_SECONDS = 60.0


def test_a_signed_notice_reaches_every_node_with_the_control_plane_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys"
    assert main(["killswitch", "keygen", "-o", str(keys)]) == 0
    with platform(tmp_path, break_glass_keys=keys / "break-glass.pub") as system:
        system.api.kill()
        system.database.stop()

        signed = tmp_path / "notice.json"
        argv = ["killswitch", "sign-notice", "--key", str(keys / "break-glass.key")]
        argv += ["--title", "Edits are paused: the database is down", "--severity", "critical"]
        argv += ["--message", "Use the kill switch for emergencies.", "-o", str(signed)]
        assert main(argv) == 0
        notice_id = json.loads(signed.read_text())["id"]

        tampered = tmp_path / "tampered.json"
        changed = {**json.loads(signed.read_text()), "title": "All is well"}
        tampered.write_text(json.dumps(changed))
        capsys.readouterr()
        assert main(["killswitch", "push", "--to", system.delivery.url, str(tampered)]) == 1
        assert "refused 403" in capsys.readouterr().err

        assert main(["killswitch", "push", "--to", system.delivery.url, str(signed)]) == 0

        def shown_by(node: FlagstaffProcess) -> bool:
            titles = [(n["_id"], n["title"]) for n in feed(node)["notices"]]
            return titles == [(notice_id, "Edits are paused: the database is down")]

        assert shown_by(system.delivery)
        wait_until(
            lambda: shown_by(system.relay),
            timeout=SETTLE_SECONDS,
            what="the relay to show the notice forwarded by the delivery node",
        )

        system.database.start()
        system.api.start()

        def audited() -> bool:
            with management.admin_client(system.api.url, ADMIN) as api:
                entries = management.ok(api.get("/api/v2/auditlog", params={"spec": "notice/*"}))
            return [(e["_id"], e["accesses"][0]["action"]) for e in entries["items"]] == [
                (notice_id, "breakGlassNotice")
            ]

        wait_until(audited, timeout=SETTLE_SECONDS, what="the signed notice in the audit log")
