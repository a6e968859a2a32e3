"""The status page every delivery node and relay serves (`/status/page`, `/status/feed.json`):
each component per region, data freshness, the SDK fleet and the operators' notices, up while the
control plane is down. See docs/operations/regions.md, "Status page".
"""

from flagstaff_server.status_page.asgi import StatusPageApp, handles
from flagstaff_server.status_page.signed_notices import SignedNotices
from flagstaff_server.status_page.site import StatusSite

__all__ = ["SignedNotices", "StatusPageApp", "StatusSite", "handles"]
