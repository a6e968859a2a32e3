"""Which audit entries a resource specifier finds: prefixes, globs, and `env/*` (a flag-level
change) standing for every environment; and what the store may narrow by."""

from __future__ import annotations

import pytest
from flagstaff_server.services.audit import environment_of, store_prefix, within

FLAG_LEVEL = "proj/shop:env/*:flag/checkout"
IN_PRODUCTION = "proj/shop:env/production:flag/checkout"


@pytest.mark.parametrize(
    ("resource", "spec", "found"),
    [
        (IN_PRODUCTION, "proj/shop", True),
        (IN_PRODUCTION, "proj/shop:env/production", True),
        (IN_PRODUCTION, "proj/shop:env/production:flag/*", True),
        (IN_PRODUCTION, "proj/*:env/production:flag/*", True),
        (IN_PRODUCTION, "proj/shop:env/test", False),
        (IN_PRODUCTION, "proj/shop:env/prod", False),
        (IN_PRODUCTION, "proj/shop2", False),
        (FLAG_LEVEL, "proj/shop:env/production", True),
        (FLAG_LEVEL, "proj/shop:env/production:flag/*", True),
        (FLAG_LEVEL, "proj/shop:env/prod*:flag/checkout", True),
        (FLAG_LEVEL, "proj/shop:env/production:flag/other", False),
        (FLAG_LEVEL, "proj/shop:env/production:segment/*", False),
        (FLAG_LEVEL, "proj/blog:env/production", False),
        ("proj/shop:env/production", "proj/shop:env/production", True),
        ("proj/shop:env/production-eu", "proj/shop:env/production", False),
        ("proj/shop:env/*:flag/checkout", "proj/*:env/*:flag/*", True),
        ("token/abc", "proj/shop:env/production", False),
    ],
)
def test_within(resource: str, spec: str, found: bool) -> None:
    assert within(resource, spec) is found


@pytest.mark.parametrize(
    ("spec", "prefix"),
    [
        ("proj/shop", "proj/shop"),
        ("proj/shop:env/production:flag/*", "proj/shop:env/"),
        ("proj/*:env/production", "proj/"),
        ("token/abc", "token/abc"),
        ("", ""),
    ],
)
def test_store_prefix_keeps_every_match(spec: str, prefix: str) -> None:
    assert store_prefix(spec) == prefix
    if spec:
        for resource in (FLAG_LEVEL, IN_PRODUCTION):
            assert not within(resource, spec) or resource.startswith(prefix)


def test_environment_of_names_only_resources_inside_one_environment() -> None:
    assert environment_of(IN_PRODUCTION) == ("shop", "production")
    assert environment_of("proj/shop:env/test:segment/beta") == ("shop", "test")
    assert environment_of(FLAG_LEVEL) is None
    assert environment_of("proj/shop:env/production") is None
    assert environment_of("proj/shop") is None
    assert environment_of("token/abc") is None
