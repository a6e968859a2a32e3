"""The break-glass kill switch: overrides signed offline with an operator's Ed25519 key, pushed
to delivery nodes and relays, which serve the flag accordingly to every SDK with the API, the
database and the change feed gone. See docs/break-glass.md.
"""

from flagstaff_server.break_glass.asgi import BreakGlassApp, handles
from flagstaff_server.break_glass.signing import KeyFileError, Keyring, load_public_keys
from flagstaff_server.break_glass.switch import KillSwitch

__all__ = ["BreakGlassApp", "KeyFileError", "Keyring", "KillSwitch", "handles", "load_public_keys"]
