"""Delivery: retries reuse the payload id, 401/403 stops sending, failed batches wait in the
spool (bounded, oldest dropped and counted) and go out with their original id later."""

from __future__ import annotations

from pathlib import Path

import pytest
from event_support import Recorder, processor
from flagstaff_core import Context
from flagstaff_sdk import Config, Timing
from flagstaff_sdk.events import DropReason, EventOptions, EventProcessor
from flagstaff_sdk.events.courier import is_recoverable
from support.deadlines import wait_until
from support.ports import listening_port

USER = Context.create("u1")


def test_retries_reuse_the_payload_id_until_one_succeeds() -> None:
    recorder = Recorder()
    recorder.answers = [503, None, 202]
    with processor(recorder, retry_delays=(0.0, 0.0, 0.0)) as sink:
        sink.record_custom("a", USER, None, None)
        assert sink.sync(5)
        stats = sink.stats()
    attempts = recorder.bulk()
    assert len(attempts) == 3
    assert len({r.headers["x-launchdarkly-payload-id"] for r in attempts}) == 1
    assert stats.failed_attempts == 2
    assert stats.delivered_payloads == 1
    assert stats.spooled_payloads == 0


def test_each_flush_gets_a_new_payload_id() -> None:
    recorder = Recorder()
    with processor(recorder) as sink:
        sink.record_custom("a", USER, None, None)
        assert sink.sync(5)
        sink.record_custom("b", USER, None, None)
        assert sink.sync(5)
    ids = [r.headers["x-launchdarkly-payload-id"] for r in recorder.bulk()]
    assert len(ids) == 2
    assert ids[0] != ids[1]


@pytest.mark.parametrize("status", [401, 403, 404])
def test_an_unrecoverable_status_stops_sending_and_says_so(status: int) -> None:
    recorder = Recorder()
    recorder.answers = [status]
    with processor(recorder) as sink:
        sink.record_custom("a", USER, None, None)
        assert sink.sync(5)
        sink.record_custom("b", USER, None, None)
        assert sink.sync(5)
        stats = sink.stats()
    assert len(recorder.bulk()) == 1  # no retry, and nothing after
    assert stats.disabled
    assert stats.last_status == status
    assert stats.dropped[DropReason.DISABLED] == 1


def test_recoverable_statuses_follow_launchdarkly() -> None:
    assert [s for s in (400, 401, 403, 404, 408, 413, 429, 500, 503) if is_recoverable(s)] == [
        400,
        408,
        429,
        500,
        503,
    ]


def test_a_failed_batch_waits_in_the_spool_and_is_sent_with_its_id_when_the_endpoint_returns() -> (
    None
):
    recorder = Recorder()
    recorder.answers = [503] * 6  # two full cycles of three attempts fail
    with processor(recorder) as sink:
        sink.record_custom("first", USER, None, None)
        assert sink.sync(5)
        wait_until(lambda: sink.stats().spooled_payloads == 0, what="spool drained")
        sink.record_custom("second", USER, None, None)
        assert sink.sync(5)
        stats = sink.stats()
    bulk = recorder.bulk()
    first_ids = {r.headers["x-launchdarkly-payload-id"] for r in bulk[:7]}
    assert len(first_ids) == 1
    assert len(bulk) == 8
    assert [e["key"] for e in recorder.of_kind("custom")] == ["first", "second"]
    assert stats.delivered_payloads == 2
    assert stats.failed_attempts == 6


def test_the_spool_drops_the_oldest_batches_beyond_its_bound_and_counts_their_events() -> None:
    recorder = Recorder()
    recorder.answers = [503] * 1000
    with processor(
        recorder, spool_max_bytes=700, spool_retry_interval=30.0, spool_retry_max=30.0
    ) as sink:
        for n in range(5):
            sink.record_custom(f"e{n}", Context.create(f"user-{n}"), None, None)
            assert sink.sync(5)
        stats = sink.stats()
        recorder.answers = []
    # every batch is an index and a custom event of ~200 bytes: the spool keeps the newest three
    assert stats.spooled_payloads == 3
    assert stats.dropped[DropReason.SPOOL_FULL] == 4
    # closing tried the spool once more and the endpoint was back
    assert [e["key"] for e in recorder.of_kind("custom")] == ["e2", "e3", "e4"]


def test_close_flushes_what_is_buffered() -> None:
    recorder = Recorder()
    with processor(recorder) as sink:
        sink.record_custom("late", USER, None, None)
    assert [e["key"] for e in recorder.of_kind("custom")] == ["late"]


def test_closing_with_the_endpoint_down_and_no_spool_directory_counts_the_loss() -> None:
    recorder = Recorder()
    recorder.answers = [None] * 1000
    with processor(recorder, close_timeout=0.5) as sink:
        sink.record_custom("lost", USER, None, None)
    stats = sink.stats()
    assert stats.dropped[DropReason.UNDELIVERED_AT_CLOSE] == 2  # index + custom
    assert stats.delivered_events == 0


def test_a_disk_spool_outlives_the_process_and_keeps_the_payload_id(tmp_path: Path) -> None:
    down = Recorder()
    down.answers = [None] * 1000
    with processor(down, spool_dir=tmp_path, close_timeout=0.2) as sink:
        sink.record_custom("kept", USER, None, None)
        assert sink.sync(5)
    assert sink.stats().dropped_total == 0
    (spooled_id,) = {r.headers["x-launchdarkly-payload-id"] for r in down.bulk()}
    assert len(list(tmp_path.glob("*.json"))) == 1

    up = Recorder()
    with processor(up, spool_dir=tmp_path) as sink:
        wait_until(lambda: len(up.bulk()) == 1, what="spooled batch sent")
        sink.record_custom("new", USER, None, None)
        assert sink.sync(5)
    assert up.bulk()[0].headers["x-launchdarkly-payload-id"] == spooled_id
    assert [e["key"] for e in up.of_kind("custom")] == ["kept", "new"]
    assert list(tmp_path.glob("*.json")) == []


@pytest.mark.timeout(30)
def test_close_is_bounded_when_the_endpoint_accepts_but_never_answers() -> None:
    """A listening socket nobody reads: requests hang for the 60 s read timeout, close does not."""
    with listening_port() as blackhole:
        config = Config(
            sdk_key="sdk-blackhole",
            base_uri=f"http://127.0.0.1:{blackhole}",
            timing=Timing(connect_timeout=60.0, read_timeout=60.0),
        )
        sink = EventProcessor(
            config,
            EventOptions(close_timeout=0.5, diagnostic_opt_out=True, flush_interval=3600.0),
        )
        sink.record_custom("stuck", USER, None, None)
        sink.flush()
        sink.record_custom("at-close", USER, None, None)
        sink.close()
        assert sink.stats().delivered_events == 0
