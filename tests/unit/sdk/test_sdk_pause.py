"""The SDK actors' one way to wait: a pause ends at its time, or as soon as the client stops or
one of the events it was given is set (not once all of them are)."""

from __future__ import annotations

import asyncio

from flagstaff_sdk.pause import Pause


def test_a_pause_is_cut_short_by_any_one_event() -> None:
    async def main() -> tuple[bool, bool]:
        stopping, changed = asyncio.Event(), asyncio.Event()
        pause = asyncio.ensure_future(Pause(stopping)(3600.0, changed))
        await asyncio.sleep(0)
        changed.set()  # the client is not stopping: only this one event is set
        await asyncio.wait_for(pause, timeout=30)
        return pause.done(), stopping.is_set()

    assert asyncio.run(main()) == (True, False)


def test_a_pause_is_cut_short_by_the_stop() -> None:
    async def main() -> bool:
        stopping = asyncio.Event()
        pause = asyncio.ensure_future(Pause(stopping)(3600.0, asyncio.Event()))
        await asyncio.sleep(0)
        stopping.set()
        await asyncio.wait_for(pause, timeout=30)
        return pause.done()

    assert asyncio.run(main()) is True


def test_a_pause_with_nothing_set_lasts_its_time() -> None:
    async def main() -> bool:
        pause = asyncio.ensure_future(Pause(asyncio.Event())(0.01, asyncio.Event()))
        await asyncio.wait_for(pause, timeout=30)
        return pause.done()

    assert asyncio.run(main()) is True
