"""The Authlib OpenID client's ID-token checks against a provider faked at the HTTP layer
(httpx.MockTransport serving discovery, JWKS and the token endpoint, with keys made here): a good
token passes; a bad signature, another issuer or audience, an expired token, a wrong nonce and an
HMAC-signed token are refused; an unknown key id makes one JWKS refetch, and such refetches stay
bounded. The same flow against a real provider is tests/e2e/oidc."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from flagstaff_server.adapters.oidc_client import AuthlibOidcClient
from flagstaff_server.errors import IdentityProviderError
from flagstaff_server.services.sso_ports import AuthorizationStart, OidcClientConfig
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

ISSUER = "https://idp.test"
NOW = 1_800_000_000
CONFIG = OidcClientConfig(
    issuer=ISSUER, client_id="flagstaff", client_secret="s3cret", scopes=("openid", "email")
)
START = AuthorizationStart(
    redirect_uri="http://flagstaff.test/cb", state="st", nonce="n-1", code_verifier="v" * 48
)


def rsa_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


KEY_A = rsa_key("a")
KEY_B = rsa_key("b")


@dataclass
class FakeIdp:
    published: list[RSAKey] = field(default_factory=lambda: [KEY_A])
    next_token: str = ""
    jwks_requests: int = 0
    token_forms: list[dict[str, list[str]]] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/.well-known/openid-configuration":
            return httpx.Response(
                200,
                json={
                    "issuer": ISSUER,
                    "authorization_endpoint": f"{ISSUER}/auth",
                    "token_endpoint": f"{ISSUER}/token",
                    "jwks_uri": f"{ISSUER}/jwks",
                    "id_token_signing_alg_values_supported": ["RS256", "HS256"],
                },
            )
        if path == "/jwks":
            self.jwks_requests += 1
            return httpx.Response(
                200, json={"keys": [k.as_dict(private=False) for k in self.published]}
            )
        if path == "/token":
            self.token_forms.append(parse_qs(request.content.decode()))
            return httpx.Response(200, json={"id_token": self.next_token, "token_type": "Bearer"})
        return httpx.Response(404)


def claims(**changes: Any) -> dict[str, Any]:
    base = {
        "iss": ISSUER,
        "aud": "flagstaff",
        "sub": "u-1",
        "email": "ada@example.com",
        "iat": NOW - 10,
        "exp": NOW + 300,
        "nonce": "n-1",
    }
    return {**base, **changes}


def signed(key: Any, kid: str = "a", alg: str = "RS256", **changes: Any) -> str:
    return jwt.encode({"alg": alg, "kid": kid}, claims(**changes), key, algorithms=[alg])


@pytest.fixture
def idp() -> FakeIdp:
    return FakeIdp()


@pytest.fixture
def clock() -> list[float]:
    return [100.0]


@pytest.fixture
def client(idp: FakeIdp, clock: list[float]) -> Iterator[AuthlibOidcClient]:
    made = AuthlibOidcClient(
        transport=httpx.MockTransport(idp.handle),
        monotonic=lambda: clock[0],
        wall_clock=lambda: NOW,
        jwks_refetch_seconds=5.0,
    )
    yield made
    made.close()


def test_the_authorization_url_asks_for_the_code_with_pkce_s256(client: AuthlibOidcClient) -> None:
    url = urlsplit(client.authorization_url(CONFIG, START))
    query = parse_qs(url.query)
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{ISSUER}/auth"
    assert query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"]
    assert query["state"] == ["st"]
    assert query["nonce"] == ["n-1"]
    assert query["code_challenge"] != [START.code_verifier]


def test_a_good_id_token_gives_its_claims_and_the_verifier_goes_to_the_token_endpoint(
    client: AuthlibOidcClient, idp: FakeIdp
) -> None:
    idp.next_token = signed(KEY_A)
    assert client.redeem(CONFIG, START, "code-1")["email"] == "ada@example.com"
    form = idp.token_forms[0]
    assert form["code_verifier"] == [START.code_verifier]
    assert form["code"] == ["code-1"]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: signed(KEY_B, kid="a"), "signature"),
        (lambda: signed(KEY_A, iss="https://evil.test"), "iss"),
        (lambda: signed(KEY_A, aud="someone-else"), "aud"),
        (lambda: signed(KEY_A, exp=NOW - 3600, iat=NOW - 7200), "expired"),
        (lambda: signed(KEY_A, nonce="replayed"), "nonce"),
        (lambda: signed(OctKey.import_key("s3cret" * 6), alg="HS256"), "signature"),
    ],
    ids=["forged", "issuer", "audience", "expired", "nonce", "hmac"],
)
def test_a_bad_id_token_is_refused_saying_why(
    client: AuthlibOidcClient, idp: FakeIdp, make: Callable[[], str], reason: str
) -> None:
    idp.next_token = make()
    with pytest.raises(IdentityProviderError, match=reason):
        client.redeem(CONFIG, START, "code-1")


def test_a_rotated_key_is_fetched_once_and_unknown_key_ids_stay_bounded(
    client: AuthlibOidcClient, idp: FakeIdp, clock: list[float]
) -> None:
    idp.next_token = signed(KEY_A)
    client.redeem(CONFIG, START, "c")
    idp.published = [KEY_B]
    idp.next_token = signed(KEY_B, kid="b")
    client.redeem(CONFIG, START, "c")
    client.redeem(CONFIG, START, "c")
    assert idp.jwks_requests == 2  # the first fetch, then one for the rotation
    idp.next_token = signed(KEY_A, kid="made-up")
    for _ in range(5):
        with pytest.raises(IdentityProviderError, match="does not publish"):
            client.redeem(CONFIG, START, "c")
    assert idp.jwks_requests == 2  # within 5 s of the rotation's refetch: none
    clock[0] += 5.0
    for _ in range(5):
        with pytest.raises(IdentityProviderError, match="does not publish"):
            client.redeem(CONFIG, START, "c")
    assert idp.jwks_requests == 3  # one more, then none again for 5 s


def test_a_discovery_document_naming_another_issuer_is_refused(idp: FakeIdp) -> None:
    other = OidcClientConfig(
        issuer="https://idp.test/tenant", client_id="c", client_secret="", scopes=("openid",)
    )
    client = AuthlibOidcClient(transport=httpx.MockTransport(idp.handle))
    with pytest.raises(IdentityProviderError):
        client.authorization_url(other, START)
    client.close()
