"""Thin ASGI layers: the management API, the root app that routes to every plane, error mapping."""
