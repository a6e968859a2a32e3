"""Which contexts were already described to the service (by fully-qualified key), so an `index`
event is sent only the first time: an LRU of bounded size, forgotten every flush interval.
Owned by the actor; not thread-safe.
"""

from __future__ import annotations

from collections import OrderedDict


class ContextIndex:
    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._keys: OrderedDict[str, None] = OrderedDict()

    def notice(self, fully_qualified_key: str) -> bool:
        """Remember the key; True when it was already known (then it becomes most recent)."""
        keys = self._keys
        if fully_qualified_key in keys:
            keys.move_to_end(fully_qualified_key)
            return True
        keys[fully_qualified_key] = None
        if len(keys) > self._capacity:
            keys.popitem(last=False)
        return False

    def clear(self) -> None:
        self._keys.clear()

    def __len__(self) -> int:
        return len(self._keys)
