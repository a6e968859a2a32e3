"""The delivery plane for server-side SDKs: LaunchDarkly FDv1/FDv2 streaming and polling served
from in-memory, pre-encoded, disk-backed snapshots fed by the change feed. See docs/delivery.md.
"""

from flagstaff_server.delivery.admission import Limits
from flagstaff_server.delivery.asgi import DeliveryApp, handles
from flagstaff_server.delivery.config import DeliveryConfig
from flagstaff_server.delivery.credential import environment_item
from flagstaff_server.delivery.node import DeliveryNode

__all__ = [
    "DeliveryApp",
    "DeliveryConfig",
    "DeliveryNode",
    "Limits",
    "environment_item",
    "handles",
]
