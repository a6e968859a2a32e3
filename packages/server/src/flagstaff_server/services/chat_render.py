"""The request each receiver gets for a delivery: a webhook the audit entry
(`webhook_delivery.render_webhook`), a chat integration the message of `domain.chat_message`
(Slack's Block Kit or the generic JSON) with a link into this Flagstaff's UI. The composition
root hands `renderer(ui_base)` to the worker's delivery job."""

from __future__ import annotations

from flagstaff_server.domain.chat_message import facts_of, generic_message, slack_message
from flagstaff_server.domain.notification import Message, json_message
from flagstaff_server.services import audit
from flagstaff_server.services.ports import UnitOfWork
from flagstaff_server.services.webhook_delivery import Render, render_webhook
from flagstaff_server.services.webhook_ports import DeliveryRecord, WebhookRecord


def renderer(ui_base: str) -> Render:
    """`Render` for webhooks and chat integrations; `ui_base` is where people open the UI
    (`Settings.resolved_public_url`)."""

    def render(uow: UnitOfWork, record: WebhookRecord, delivery: DeliveryRecord) -> Message | None:
        if record.integration is None:
            return render_webhook(uow, record, delivery)
        entry = uow.audit.get(delivery.entry)
        if entry is None:
            return None
        shown = audit.represent(entry, audit.token_names(uow), audit.environment_names(uow))
        environments = uow.environments.list(record.project) if record.project else []
        facts = facts_of(
            shown,
            ui_base=ui_base,
            fallback_environment=environments[0].key if environments else None,
        )
        config = record.doc["config"]
        if record.integration == "slack":
            payload = slack_message(facts)
            secret = None
        else:
            payload = generic_message(facts)
            secret = config.get("secret")
        return json_message(
            str(config["url"]),
            payload,
            delivery=delivery.id,
            attempt=delivery.attempts + 1,
            secret=secret if isinstance(secret, str) else None,
        )

    return render
