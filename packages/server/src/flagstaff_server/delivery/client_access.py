"""Who a client-side request speaks for: the environment its credential names (client-side id,
mobile key, SDK key, or any of them for OFREP) and what that credential may see; the context it
asks about (path or body) and the secure-mode check. A credential the node does not know is
answered as unknown only after a feed check confirms it; until then 503.
"""

from __future__ import annotations

from collections.abc import Callable

from flagstaff_core import Availability

from flagstaff_server.asgi import Scope
from flagstaff_server.context_limits import check_size
from flagstaff_server.delivery.asgi import sdk_key_of
from flagstaff_server.delivery.client_context import (
    ClientContext,
    check_secure_mode,
    decode_base64_json,
    parse_json,
    read_context,
)
from flagstaff_server.delivery.client_http import (
    check_json,
    header,
    query_value,
)
from flagstaff_server.delivery.client_route import Route
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.store import Environment
from flagstaff_server.errors import (
    FlagstaffError,
    Forbidden,
    NotFound,
    StoreUnavailable,
    Unauthorized,
)


class ClientAccess:
    def __init__(self, node: ServingNode) -> None:
        self.node = node

    async def authenticate(self, route: Route, scope: Scope) -> Environment:
        lookup, unknown = self.lookup(route, scope)
        return await self.find(lookup, unknown)

    def lookup(
        self, route: Route, scope: Scope
    ) -> tuple[Callable[[], Environment | None], FlagstaffError]:
        """How to find the route's environment, and the error for a credential truly unknown."""
        if route.credential == "client-side":
            client_side_id = route.env_id
            return (
                lambda: self.node.store.find_client_side(client_side_id),
                NotFound(f"unknown environment id {client_side_id!r}", path="envId"),
            )
        authorization = header(scope, b"authorization")
        key = sdk_key_of(authorization) if authorization else ""
        if not key:
            raise Unauthorized(f"an {route.credential} key is required in Authorization")
        if route.credential == "mobile":
            return (
                lambda: self.node.store.find_mobile(key, self.node.wall()),
                Unauthorized("unknown mobile key"),
            )
        return (
            lambda: self.node.store.find(key, self.node.wall()),
            Unauthorized("unknown SDK key"),
        )

    async def find(
        self, lookup: Callable[[], Environment | None], unknown: FlagstaffError
    ) -> Environment:
        """As the server-side endpoints do: an unknown credential is answered as unknown only
        when a feed check that started after the request confirms it; otherwise 503."""
        node = self.node
        env = lookup()
        if env is None and node.current:
            known = await node.probe()
            env = lookup()
            if env is None and known:
                raise unknown
        if env is None or not node.serves(env):
            raise StoreUnavailable("this delivery node has no data for that environment yet")
        return env

    async def ofrep_environment(self, scope: Scope) -> tuple[Environment, Availability]:
        """OFREP's key (`Authorization: Bearer`, or `X-API-Key`): an SDK key sees every flag, a
        mobile key mobile flags, a client-side id browser flags."""
        given = header(scope, b"authorization") or header(scope, b"x-api-key")
        key = sdk_key_of(given) if given else ""
        if not key:
            raise Unauthorized("an SDK key, mobile key or client-side id is required")
        node, now = self.node, self.node.wall()

        def lookup() -> Environment | None:
            return (
                node.store.find(key, now)
                or node.store.find_mobile(key, now)
                or node.store.find_client_side(key)
            )

        env = await self.find(lookup, Unauthorized("unknown key"))
        credentials = env.credentials
        assert credentials is not None
        if key in credentials.sdk_keys(now):
            return env, Availability.ALL
        if key == credentials.client_side_id:
            if credentials.secure_mode:
                raise Forbidden(
                    "this environment is in secure mode: OFREP cannot prove a browser's context, "
                    "so use a mobile or SDK key from a server"
                )
            return env, Availability.CLIENT_SIDE
        return env, Availability.MOBILE


def check_secure(env: Environment, client: ClientContext, scope: Scope) -> None:
    """In a secure-mode environment, a browser must send the context's hash (`h`)."""
    credentials = env.credentials
    if credentials is not None and credentials.secure_mode:
        check_secure_mode(credentials.sdk_key, client.context, query_value(scope, "h"))


def context_of(route: Route, scope: Scope, body: bytes) -> ClientContext:
    """The context from the path, or from a REPORT's whole `body`."""
    if route.context is not None:
        return read_context(decode_base64_json(route.context))
    check_json(scope)
    check_size(len(body), field="body")
    return read_context(parse_json(body, "context"))
