"""Store calls as OpenTelemetry client spans: one span per SQL statement the store's engine runs,
named and attributed by the database client conventions (`db.system.name`, `db.operation.name`,
`db.collection.name`, `db.query.text`, `db.namespace`, `server.address`). Statements are the
store's own parameterised SQL, so the text carries no values. Attached through SQLAlchemy's
cursor events; changes nothing the store does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from sqlalchemy import Engine, event

_SPAN_KEY = "_flagstaff_otel_span"
_MAX_QUERY_TEXT = 2000
_OPERATION = re.compile(r"^\s*([A-Za-z]+)")
_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE|TABLE)\s+\"?([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


@lru_cache(maxsize=1024)
def statement_summary(statement: str) -> tuple[str | None, str | None]:
    """The statement's operation (`SELECT`, `INSERT`, ...) and the first table it names."""
    operation = _OPERATION.match(statement)
    table = _TABLE.search(statement)
    return (
        None if operation is None else operation.group(1).upper(),
        None if table is None else table.group(1),
    )


def trace_engine(engine: Engine, tracer: trace.Tracer) -> None:
    """Every statement `engine` runs from now on becomes a span (a child of the current one)."""
    url = engine.url
    system = "postgresql" if engine.dialect.name == "postgresql" else engine.dialect.name
    base: dict[str, Any] = {"db.system.name": system}
    if url.database:
        base["db.namespace"] = url.database
    if url.host:
        base["server.address"] = url.host
        base["server.port"] = url.port or 5432

    def before(
        conn: Any,
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        executemany: bool,
    ) -> None:
        operation, table = statement_summary(statement)
        attributes = dict(base)
        attributes["db.query.text"] = statement[:_MAX_QUERY_TEXT]
        if operation is not None:
            attributes["db.operation.name"] = operation
        if table is not None:
            attributes["db.collection.name"] = table
        name = " ".join(part for part in (operation, table) if part) or system
        span = tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        if context is not None:
            setattr(context, _SPAN_KEY, span)

    def after(
        conn: Any,
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        executemany: bool,
    ) -> None:
        span = getattr(context, _SPAN_KEY, None)
        if span is not None:
            span.end()
            setattr(context, _SPAN_KEY, None)

    def failed(exception_context: Any) -> None:
        span = getattr(exception_context.execution_context, _SPAN_KEY, None)
        if span is not None:
            error = exception_context.original_exception
            span.set_attribute("error.type", type(error).__qualname__)
            span.set_status(Status(StatusCode.ERROR, str(error)[:200]))
            span.end()
            setattr(exception_context.execution_context, _SPAN_KEY, None)

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    event.listen(engine, "handle_error", failed)
