"""The relay: a regional edge serving every SDK-facing endpoint of the delivery plane from
memory, fed by one upstream connection per environment (or offline data files), with a disk
store it starts from, an optional Redis store for daemon-mode SDKs, and a durable event spool.
See docs/relay.md.

`Relay` (relay.edge, with the whole delivery plane behind it) is imported on first use: the
`flagstaff` parser reads the relay's configuration names, and every command builds that parser.
"""

from typing import TYPE_CHECKING, Any

from flagstaff_server.relay.config import RelayConfig
from flagstaff_server.relay.config_source import load_config

if TYPE_CHECKING:
    from flagstaff_server.relay.edge import Relay

__all__ = ["Relay", "RelayConfig", "load_config"]


def __getattr__(name: str) -> Any:
    if name == "Relay":
        from flagstaff_server.relay.edge import Relay

        return Relay
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
