"""The port single sign-on talks to an OpenID provider through: build the authorization URL
(code flow with PKCE) and redeem the code for a validated ID token's claims. Pure declarations;
the Authlib adapter (`adapters.oidc_client`) and the tests' fakes implement it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True, kw_only=True)
class OidcClientConfig:
    """Which provider and which registered client (from the SSO settings)."""

    issuer: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthorizationStart:
    """What one sign-in sends and must find again: `state` ties the callback to it, `nonce`
    ties the ID token to it, `code_verifier` proves the code is redeemed by who asked (PKCE)."""

    redirect_uri: str
    state: str
    nonce: str = field(repr=False)
    code_verifier: str = field(repr=False)


class OidcClient(Protocol):
    def authorization_url(self, config: OidcClientConfig, start: AuthorizationStart) -> str:
        """The provider's authorization endpoint (found by discovery) with the request in its
        query. Raises `IdentityProviderError` when the provider cannot be discovered."""
        ...

    def redeem(
        self, config: OidcClientConfig, start: AuthorizationStart, code: str
    ) -> Mapping[str, Any]:
        """Exchange `code` at the token endpoint and return the ID token's claims once its
        signature (JWKS), issuer, audience, expiry and nonce are checked. Raises
        `IdentityProviderError` for any refusal, with the reason."""
        ...


__all__ = ["AuthorizationStart", "OidcClient", "OidcClientConfig"]
