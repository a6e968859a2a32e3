"""Shared by the code-references API tests: the admin token and the project the server in
`conftest` is given."""

from __future__ import annotations

ADMIN_TOKEN = "code-refs-admin-token"
PROJECT = "p"
