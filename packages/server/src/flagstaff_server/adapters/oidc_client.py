"""The OpenID Connect client behind single sign-on (`services.sso_ports.OidcClient`): issuer
discovery, the authorization URL with PKCE (S256), the code exchange, and the ID token's checks
(signature by the provider's JWKS, issuer, audience, expiry, nonce) with Authlib's OIDC claims
rules over joserfc's JWS. Every failure becomes `IdentityProviderError`; nothing is logged.

Key rotation: a token signed with a key id the cached JWKS lacks makes one refetch, and such
refetches are at most one per `jwks_refetch_seconds` per provider, so tokens with made-up key ids
cannot make Flagstaff hammer the provider.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from authlib.oidc.discovery import get_well_known_url
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from flagstaff_server.errors import IdentityProviderError
from flagstaff_server.services.sso_ports import AuthorizationStart, OidcClientConfig

# Asymmetric only: "none" and the HMAC family (keyed by the client secret) are never accepted.
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
DISCOVERY_SECONDS = 3600.0
LEEWAY_SECONDS = 60
MAX_RESPONSE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Discovered:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    algorithms: tuple[str, ...]
    fetched: float


@dataclass(slots=True)
class CachedKeys:
    keys: KeySet
    refetched: float | None = None
    """When an unknown key id last made a refetch (monotonic seconds)."""


class AuthlibOidcClient:
    def __init__(
        self,
        *,
        timeout_seconds: float = 10.0,
        jwks_refetch_seconds: float = 5.0,
        monotonic: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(timeout=timeout_seconds, transport=transport)
        self._refetch_seconds = jwks_refetch_seconds
        self._monotonic, self._wall_clock = monotonic, wall_clock
        self._lock = threading.Lock()
        self._discovered: dict[str, Discovered] = {}
        self._keys: dict[str, CachedKeys] = {}
        self.jwks_fetches = 0
        """How many times a JWKS was fetched (tests read it to see the bound hold)."""

    def close(self) -> None:
        self._http.close()

    # the port ----------------------------------------------------------------------------------

    def authorization_url(self, config: OidcClientConfig, start: AuthorizationStart) -> str:
        provider = self._discover(config.issuer)
        params = [
            ("response_type", "code"),
            ("client_id", config.client_id),
            ("redirect_uri", start.redirect_uri),
            ("scope", " ".join(config.scopes)),
            ("state", start.state),
            ("nonce", start.nonce),
            ("code_challenge", create_s256_code_challenge(start.code_verifier)),
            ("code_challenge_method", "S256"),
        ]
        return str(add_params_to_uri(provider.authorization_endpoint, params))

    def redeem(
        self, config: OidcClientConfig, start: AuthorizationStart, code: str
    ) -> Mapping[str, Any]:
        provider = self._discover(config.issuer)
        answer = self._json(
            "POST",
            provider.token_endpoint,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": start.redirect_uri,
                "code_verifier": start.code_verifier,
                "client_id": config.client_id,
            },
            auth=(config.client_id, config.client_secret) if config.client_secret else None,
            what="the token endpoint",
        )
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise IdentityProviderError("the token endpoint answered without an ID token")
        token = self._verified(provider, id_token)
        claims = CodeIDToken(
            dict(token.claims),
            dict(token.header),
            {
                "iss": {"essential": True, "value": provider.issuer},
                "aud": {"essential": True, "value": config.client_id},
                "nonce": {"essential": True, "value": start.nonce},
            },
            {"nonce": start.nonce, "client_id": config.client_id},
        )
        try:
            claims.validate(now=int(self._wall_clock()), leeway=LEEWAY_SECONDS)
        except JoseError as exc:
            raise IdentityProviderError(f"the ID token was refused: {exc}") from exc
        return dict(token.claims)

    # discovery and keys ------------------------------------------------------------------------

    def _discover(self, issuer: str) -> Discovered:
        with self._lock:
            found = self._discovered.get(issuer)
        if found is not None and self._monotonic() - found.fetched < DISCOVERY_SECONDS:
            return found
        url = get_well_known_url(issuer, external=True)
        doc = self._json("GET", url, what="the discovery document")
        if doc.get("issuer") != issuer:
            raise IdentityProviderError(
                f"the discovery document names issuer {doc.get('issuer')!r}, not {issuer!r}"
            )
        endpoints = [doc.get(name) for name in ("authorization_endpoint", "token_endpoint")]
        jwks_uri = doc.get("jwks_uri")
        if not all(isinstance(e, str) for e in [*endpoints, jwks_uri]):
            raise IdentityProviderError("the discovery document lacks an endpoint or jwks_uri")
        offered = doc.get("id_token_signing_alg_values_supported", ["RS256"])
        algorithms = tuple(a for a in SIGNING_ALGORITHMS if a in offered) or ("RS256",)
        found = Discovered(
            issuer=issuer,
            authorization_endpoint=str(endpoints[0]),
            token_endpoint=str(endpoints[1]),
            jwks_uri=str(jwks_uri),
            algorithms=algorithms,
            fetched=self._monotonic(),
        )
        with self._lock:
            self._discovered[issuer] = found
        return found

    def _verified(self, provider: Discovered, id_token: str) -> jwt.Token:
        cached = self._keys.get(provider.jwks_uri) or self._fetch_keys(provider.jwks_uri, None)
        try:
            return self._decode(provider, id_token, cached.keys)
        except InvalidKeyIdError:
            now = self._monotonic()
            if cached.refetched is not None and now - cached.refetched < self._refetch_seconds:
                raise IdentityProviderError(
                    "the ID token is signed with a key the provider does not publish"
                ) from None
            cached = self._fetch_keys(provider.jwks_uri, now)
        try:
            return self._decode(provider, id_token, cached.keys)
        except InvalidKeyIdError:
            raise IdentityProviderError(
                "the ID token is signed with a key the provider does not publish"
            ) from None

    def _decode(self, provider: Discovered, id_token: str, keys: KeySet) -> jwt.Token:
        try:
            return jwt.decode(id_token, keys, algorithms=list(provider.algorithms))
        except InvalidKeyIdError:
            raise
        except (JoseError, ValueError) as exc:
            raise IdentityProviderError(f"the ID token's signature was refused: {exc}") from exc

    def _fetch_keys(self, jwks_uri: str, refetched: float | None) -> CachedKeys:
        doc = self._json("GET", jwks_uri, what="the JWKS")
        try:
            keys = KeySet.import_key_set(doc)  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise IdentityProviderError(f"the provider's JWKS is not usable: {exc}") from exc
        cached = CachedKeys(keys=keys, refetched=refetched)
        with self._lock:
            self._keys[jwks_uri] = cached
            self.jwks_fetches += 1
        return cached

    def _json(
        self,
        method: str,
        url: str,
        *,
        what: str,
        data: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        try:
            response = self._http.request(method, url, data=data, auth=auth)
        except httpx.HTTPError as exc:
            raise IdentityProviderError(f"{what} could not be reached: {exc}") from exc
        if len(response.content) > MAX_RESPONSE_BYTES:
            raise IdentityProviderError(f"{what} answered more than {MAX_RESPONSE_BYTES} bytes")
        if response.status_code != httpx.codes.OK:
            raise IdentityProviderError(f"{what} answered {response.status_code}")
        try:
            body = response.json()
        except ValueError as exc:
            raise IdentityProviderError(f"{what} did not answer JSON") from exc
        if not isinstance(body, dict):
            raise IdentityProviderError(f"{what} did not answer a JSON object")
        return body
