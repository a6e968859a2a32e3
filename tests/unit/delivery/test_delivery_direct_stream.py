"""`DirectStream` against a recording transport: chunk framing, slow-client eviction by write
buffer size, clean close, and bookkeeping (its `ended` callback, once) when the connection is
lost."""

from __future__ import annotations

from flagstaff_server.delivery.fanout import Broadcaster, DirectStream


class RecordingTransport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.buffered = 0
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True


def _stream(
    ended: list[DirectStream] | None = None,
) -> tuple[DirectStream, RecordingTransport, Broadcaster]:
    transport = RecordingTransport()
    broadcaster = Broadcaster()
    clock = iter(float(t) for t in range(100))
    calls = ended if ended is not None else []

    def end(stream: DirectStream) -> None:
        broadcaster.channels.discard(stream)
        calls.append(stream)

    stream = DirectStream(
        "v2", transport, limit=1000, deadline=50.0, clock=lambda: next(clock), ended=end
    )
    broadcaster.channels.add(stream)
    return stream, transport, broadcaster


def test_events_are_written_as_http_chunks_and_stamp_last_sent() -> None:
    stream, transport, _broadcaster = _stream()
    assert stream.last_sent == 0.0
    assert stream.offer(b"event: x\ndata: {}\n\n")
    assert transport.written == [b"13\r\nevent: x\ndata: {}\n\n\r\n"]
    assert stream.last_sent == 1.0
    assert not stream.pending


def test_a_full_write_buffer_refuses_the_event_and_the_broadcaster_evicts() -> None:
    ended: list[DirectStream] = []
    stream, transport, broadcaster = _stream(ended)
    transport.buffered = 1001
    assert broadcaster.publish(b"v1", b"v2") == 1
    assert transport.written == []
    assert (stream.evicted, stream.closing, transport.aborted) == (True, "slow", True)
    stream.connection_lost(None)
    assert stream.closing == "slow"
    assert ended == [stream]
    assert not broadcaster.channels


def test_close_writes_the_final_event_and_the_last_chunk_once() -> None:
    stream, transport, _broadcaster = _stream()
    final = b"event: goodbye\ndata: {}\n\n"
    stream.close("max age", final)
    stream.close("shutdown", final)
    assert transport.written == [b"19\r\n" + final + b"\r\n0\r\n\r\n"]
    assert transport.closed
    assert stream.closing == "max age"
    assert stream.offer(b"late")  # accepted and dropped: the stream is ending
    assert len(transport.written) == 1


def test_a_lost_connection_unregisters_the_stream() -> None:
    ended: list[DirectStream] = []
    stream, _transport, broadcaster = _stream(ended)
    stream.data_received(b"GET /ignored HTTP/1.1\r\n\r\n")
    stream.connection_lost(ConnectionResetError())
    assert stream.closing == "disconnected"
    assert ended == [stream]
    assert not broadcaster.channels
