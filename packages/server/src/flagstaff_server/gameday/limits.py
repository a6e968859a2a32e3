"""What one game-day process needs to carry a full-size fleet: descriptors and a fast loop.

Each streaming client holds three descriptors in this process (its socket and the fault
proxy's two), so 5,000 clients need ~15,000 beside the real SDKs, the proxies' listeners and
Python's own; a soft limit of 1,024 (a common default) or a hard one of 20,000 runs out.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

WANTED_OPEN_FILES = 262_144


def raise_open_files(console: Console, wanted: int = WANTED_OPEN_FILES) -> int:
    """Raise RLIMIT_NOFILE towards `wanted`: the soft limit up to the hard one, and the hard
    one too when the process may (root, bounded by /proc/sys/fs/nr_open). The soft limit now
    in force, which child processes (the nodes) inherit."""
    if sys.platform == "win32":
        return wanted
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
        except (ValueError, OSError):
            pass  # not allowed: the hard limit is what there is
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < wanted:
        console.print(f"open files limited to {soft}: a fleet of ~{soft // 3} streams at most")
    return soft


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop where there is one (what the nodes run on too): its transports cost a fraction
    of the default loop's per read and write, which a fleet of thousands of streams spends on."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop
    return uvloop.new_event_loop
