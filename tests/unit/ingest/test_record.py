"""Journal record framing: round trip, torn tails and corrupt bytes are detected by length/CRC."""

from __future__ import annotations

from flagstaff_server.ingest.record import Kind, Record, encode, scan


def make(seq: int, payload: bytes = b'[{"kind":"custom"}]', payload_id: str = "p") -> Record:
    return Record(
        seq=seq,
        received_ms=1_700_000_000_000 + seq,
        kind=Kind.ANALYTICS,
        project="shop",
        environment="production",
        payload_id=f"{payload_id}{seq}",
        payload=payload,
    )


def test_records_round_trip_through_their_frames() -> None:
    records = [make(1), make(2, b"[]"), make(3, '["é"]'.encode())]
    data = b"".join(encode(r) for r in records)
    found = scan(data)
    assert found.records == records
    assert found.valid_bytes == len(data)
    assert not found.torn


def test_every_torn_tail_is_dropped_and_earlier_records_kept() -> None:
    first, second = encode(make(1)), encode(make(2))
    for cut in range(1, len(second)):
        found = scan(first + second[:cut])
        assert [r.seq for r in found.records] == [1]
        assert found.valid_bytes == len(first)
        assert found.torn


def test_a_flipped_byte_fails_the_crc() -> None:
    first, second = encode(make(1)), bytearray(encode(make(2)))
    second[-3] ^= 0x40
    found = scan(first + bytes(second) + encode(make(3)))
    assert [r.seq for r in found.records] == [1]
    assert found.torn


def test_limit_stops_early_without_calling_the_rest_torn() -> None:
    data = b"".join(encode(make(seq)) for seq in range(1, 6))
    found = scan(data, limit=2)
    assert [r.seq for r in found.records] == [1, 2]
    assert not found.torn
    assert found.ends[-1] == found.valid_bytes
