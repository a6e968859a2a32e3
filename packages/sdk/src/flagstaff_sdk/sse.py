"""An incremental Server-Sent Events parser (WHATWG rules) over arbitrary byte chunks.

Pure: bytes in, events out. Must not do I/O or interpret event payloads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class SseRetry:
    """A `retry:` field: the server's preferred reconnect delay."""

    milliseconds: int


@dataclass(frozen=True, slots=True)
class SseComment:
    """A comment line (`: ...`); servers send them as heartbeats."""

    text: str


SseItem = SseEvent | SseRetry | SseComment


class SseParser:
    """Feed bytes with `feed`; iterate the events, retry hints and comments they complete.

    Lines end with CRLF, LF or CR, even when a CRLF pair is split across two chunks.
    """

    __slots__ = ("_buffer", "_data", "_event", "_has_data", "_last_id", "_skip_lf", "_started")

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._has_data = False
        self._event = ""
        self._last_id: str | None = None
        self._skip_lf = False
        self._started = False

    @property
    def last_event_id(self) -> str | None:
        return self._last_id

    def feed(self, chunk: bytes) -> Iterator[SseItem]:
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        buffer = self._buffer + chunk
        start = 0
        length = len(buffer)
        while start < length:
            lf = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start, lf if lf >= 0 else length)
            if cr >= 0:
                end, next_start = cr, cr + 1
                if next_start < length:
                    if buffer[next_start : next_start + 1] == b"\n":
                        next_start += 1
                else:
                    # a CR at the very end: its LF (if any) arrives with the next chunk
                    self._skip_lf = True
            elif lf >= 0:
                end, next_start = lf, lf + 1
            else:
                break
            item = self._line(buffer[start:end])
            if item is not None:
                yield item
            start = next_start
        self._buffer = buffer[start:]

    def _line(self, raw: bytes) -> SseItem | None:
        if not self._started:
            self._started = True
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        line = raw.decode("utf-8", errors="replace")
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return SseComment(line[1:].removeprefix(" "))
        name, colon, value = line.partition(":")
        if colon:
            value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry" and value.isdigit() and value.isascii():
            return SseRetry(int(value))
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._has_data:
            self._event = ""
            return None
        event = SseEvent(self._event or "message", "\n".join(self._data), self._last_id)
        self._data = []
        self._has_data = False
        self._event = ""
        return event
