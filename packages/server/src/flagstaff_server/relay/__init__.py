"""The relay: a regional edge serving every SDK-facing endpoint of the delivery plane from
memory, fed by one upstream connection per environment (or offline data files), with a disk
store it starts from, an optional Redis store for daemon-mode SDKs, and a durable event spool.
See docs/relay.md.
"""

from flagstaff_server.relay.config import RelayConfig
from flagstaff_server.relay.config_source import load_config
from flagstaff_server.relay.edge import Relay

__all__ = ["Relay", "RelayConfig", "load_config"]
