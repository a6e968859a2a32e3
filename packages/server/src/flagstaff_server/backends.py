"""The adapters the settings ask for, built for the composition root (`app`): the SQL store
(SQLite in the data directory, or the configured database), the change feed (Redis, or
in-process), and the worker role's jobs. Builds; never starts or stops anything."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.adapters.redis_feed import RedisChangeFeed
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.metric_totals import aggregator
from flagstaff_server.services import chat_render
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import ChangeFeed, Store
from flagstaff_server.services.webhook_delivery import RetryPolicy, WebhookDelivery
from flagstaff_server.services.webhook_ports import Sender
from flagstaff_server.settings import Settings
from flagstaff_server.worker import Job
from flagstaff_server.worker.automated_release_job import automated_release_job
from flagstaff_server.worker.scheduled_change_job import scheduled_change_job
from flagstaff_server.worker.webhook_job import webhook_job


def open_store(settings: Settings) -> Store:
    if settings.database_url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    # A delivery-only node must come up during a database outage and serve its disk
    # snapshot; the API needs the database, so it fails fast instead.
    connect_later = not settings.serves_api
    return SqlStore(
        settings.resolved_database_url, connect_later=connect_later, region=settings.region
    )


def open_feed(settings: Settings, store: Store) -> ChangeFeed:
    poll = settings.resolved_feed_poll_seconds
    if settings.redis_url:
        if poll is None:
            return RedisChangeFeed(store, settings.redis_url)
        return RedisChangeFeed(store, settings.redis_url, idle_check=poll)
    if poll is None:
        return InProcessChangeFeed(store)
    return InProcessChangeFeed(store, idle_check=poll)


def worker_jobs(
    settings: Settings,
    plane: ControlPlane,
    sender: Sender,
    analytics: Callable[[], AnalyticsStore],
) -> list[Job]:
    """The worker role's jobs (docs/workflows.md, "The worker"): each workflow that needs
    work done in the background, at a time or again after a failure, adds its job here.
    `analytics` opens the analytics store on first use (guarded rollouts read metrics)."""
    poll = timedelta(seconds=settings.worker_poll_seconds)
    return [
        scheduled_change_job(plane, every=poll),
        webhook_job(webhook_delivery(settings, plane, sender), every=poll),
        automated_release_job(plane, aggregator(analytics), every=poll),
    ]


def webhook_delivery(settings: Settings, plane: ControlPlane, sender: Sender) -> WebhookDelivery:
    policy = RetryPolicy(
        delays=tuple(timedelta(seconds=s) for s in settings.webhook_retry_seconds),
        give_up_after=timedelta(seconds=settings.webhook_give_up_seconds),
    )
    return WebhookDelivery(
        plane.store,
        sender,
        clock=plane.clock,
        policy=policy,
        render=chat_render.renderer(settings.resolved_public_url),
        # a third of the lease: an attempt begun at the end still ends well within it
        run_budget=timedelta(seconds=settings.worker_lease_seconds / 3),
    )
