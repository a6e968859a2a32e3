"""The management REST API (LaunchDarkly REST v2 shapes): routers, dependencies, OpenAPI."""
