"""The loopback client: client-go's dynamic client over the loopback rest.Config. Every request goes
through the outermost server's handler chain in-process (no socket), with the per-start loopback
bearer token, so it is authenticated (as system:apiserver), audited, authorized and admitted like any
other request. Objects are plain dicts; an error Status comes back as apimachinery's StatusError."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import orjson

from .. import version
from ..apimachinery import deepjson, errors
from ..apimachinery.sharedfields import FieldsV1Sharing
from ..endpoints.http import Handler, Request, Response, StreamingResponse

if TYPE_CHECKING:
    from .discovery import DiscoveryClient

Object = dict[str, Any]
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
# rest.DefaultKubernetesUserAgent of the kube-apiserver binary: the field manager of its writes is
# "kube-apiserver", and the shutdown filter keeps serving it.
USER_AGENT = (
    f"kube-apiserver/{version.GIT_VERSION} ({version.VERSION['platform']}) "
    f"kubernetes/{version.VERSION['gitCommit'][:7]}"
)
LOOPBACK_ADDRESS = "127.0.0.1"
# What the reason of an error answer without a Status body is (client-go's newUnstructuredResponseError).
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
# The watch event lines the loopback watches of one server decoded last: every informer of a resource
# (the garbage collector's, the quota controller's, a publisher's...) is sent the same line for a change.
SHARED_EVENT_LINES = 1024


class SharedDecodes:
    """Decodes watch event lines so that the watches of one transport given the same line share one
    decoded object, as informers sharing a cache in client-go do: each informer keeping its own copy of
    every object of a resource costs more than the watch cache's copy of it (docs/memory.md). The objects
    are shared: informers' readers copy before changing one, as they already must."""

    def __init__(self, size: int = SHARED_EVENT_LINES):
        self.size = size
        self._recent: OrderedDict[bytes, Object] = OrderedDict()
        self._fields = FieldsV1Sharing()  # and objects written alike one managedFields tree

    def event(self, line: bytes) -> Object:
        """The event the line holds: a dict of its own, its object shared with the other watches'."""
        decoded = self._recent.get(line)
        if decoded is None:
            decoded = deepjson.loads(line)
            if not isinstance(decoded, dict):
                return decoded
            self._fields.share(decoded.get("object"))
            self._recent[line] = decoded
            if len(self._recent) > self.size:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(line)
        return dict(decoded)


class LoopbackTransport:
    """Hands requests to the outermost server's handler chain; attached once that server exists (as the
    loopback rest.Config is made before the server it points at)."""

    def __init__(self, token: str, user_agent: str = USER_AGENT):
        self.token = token
        self.user_agent = user_agent
        self._handler: Handler | None = None
        self.watch_events = SharedDecodes()

    def attach(self, handler: Handler) -> None:
        self._handler = handler

    async def round_trip(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: bytes | None = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Response:
        if self._handler is None:
            raise errors.service_unavailable("the loopback client is not connected to a server yet")
        headers = {"authorization": f"Bearer {self.token}", "user-agent": self.user_agent, "accept": accept}
        if body is not None:
            headers["content-type"] = content_type
            headers["content-length"] = str(len(body))
        query_string = urlencode(query or []).encode()
        req = Request(
            method,
            path,
            query_string,
            headers,
            body=body if body is not None else b"",
            remote_addr=LOOPBACK_ADDRESS,
        )
        return await self._handler(req)


def status_error(resp: Response) -> errors.StatusError:
    """The answer's Status as the StatusError it was made from (client-go's errors.FromObject)."""
    try:
        body = deepjson.loads(resp.body) if resp.body else None
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return errors.StatusError(
            int(body.get("code") or resp.status),
            body.get("reason") or "",
            body.get("message") or "",
            body.get("details"),
        )
    message = resp.body.decode("utf-8", "replace").strip() or f"the server answered {resp.status}"
    return errors.StatusError(resp.status, REASONS.get(resp.status, ""), message)


def _query_name(name: str) -> str:
    """label_selector -> labelSelector; continue_ -> continue."""
    first, *rest = name.rstrip("_").split("_")
    return first + "".join(part.title() for part in rest)


def _query(params: dict[str, Any]) -> list[tuple[str, str]]:
    pairs = []
    for name, value in params.items():
        if value is None:
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            pairs.append((_query_name(name), str(item).lower() if isinstance(item, bool) else str(item)))
    return pairs


class Watch:
    """One watch stream: its events as {"type", "object"} dicts; `stop()` ends it (watch.Interface)."""

    def __init__(self, resp: StreamingResponse, decodes: SharedDecodes | None = None):
        self._chunks = resp.chunks
        self._decodes = decodes or SharedDecodes(0)

    async def __aiter__(self) -> AsyncIterator[Object]:
        event = self._decodes.event
        async for chunk in self._chunks:
            # each event a JSON document ending in a newline (no raw newline inside JSON)
            for line in chunk.split(b"\n"):
                if line.strip():
                    yield event(line)

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self._chunks.aclose()  # type: ignore[attr-defined]


class ResourceClient:
    """dynamic.NamespaceableResourceInterface: one resource, optionally in one namespace."""

    def __init__(
        self, transport: LoopbackTransport, group: str, version: str, resource: str, namespace: str = ""
    ):
        self.transport = transport
        self.group, self.version, self.resource, self.ns = group, version, resource, namespace

    def namespace(self, namespace: str) -> ResourceClient:
        return ResourceClient(self.transport, self.group, self.version, self.resource, namespace)

    def path(self, name: str = "", subresource: str = "") -> str:
        """The request path as the server's handlers see it: decoded (ASGI's path), so nothing is escaped."""
        parts = ["/api", self.version] if not self.group else ["/apis", self.group, self.version]
        if self.ns:
            parts += ["namespaces", self.ns]
        parts.append(self.resource)
        if name:
            parts.append(name)
        if subresource:
            parts.append(subresource)
        return "/".join(parts)

    async def _do(
        self, method: str, path: str, params: dict[str, Any], body: Any = None, content_type: str = JSON
    ) -> Object:
        encoded = None if body is None else body if isinstance(body, bytes) else deepjson.dumps(body)
        resp = await self.transport.round_trip(method, path, _query(params), encoded, content_type)
        if isinstance(resp, StreamingResponse):
            raise errors.internal_error("a streamed answer to a request that is not a watch")
        if resp.status >= 400:
            raise status_error(resp)
        return deepjson.loads(resp.body) if resp.body else {}

    async def get(self, name: str, subresource: str = "", **params: Any) -> Object:
        return await self._do("GET", self.path(name, subresource), params)

    async def list(self, **params: Any) -> Object:
        return await self._do("GET", self.path(), params)

    async def create(self, obj: Object, subresource: str = "", name: str = "", **params: Any) -> Object:
        """`name`: the parent's name when creating a subresource (pods/eviction, serviceaccounts/token)."""
        return await self._do("POST", self.path(name, subresource), params, obj)

    async def update(self, obj: Object, subresource: str = "", **params: Any) -> Object:
        name = (obj.get("metadata") or {}).get("name") or ""
        return await self._do("PUT", self.path(name, subresource), params, obj)

    async def update_status(self, obj: Object, **params: Any) -> Object:
        return await self.update(obj, "status", **params)

    async def patch(
        self, name: str, patch: Any, patch_type: str = MERGE_PATCH, subresource: str = "", **params: Any
    ) -> Object:
        return await self._do("PATCH", self.path(name, subresource), params, patch, patch_type)

    async def delete(
        self, name: str, options: Object | None = None, subresource: str = "", **params: Any
    ) -> Object:
        """The deleted object (or a Success Status); `options`: a DeleteOptions body."""
        return await self._do("DELETE", self.path(name, subresource), params, options)

    async def delete_collection(self, options: Object | None = None, **params: Any) -> Object:
        return await self._do("DELETE", self.path(), params, options)

    async def watch(self, **params: Any) -> Watch:
        resp = await self.transport.round_trip("GET", self.path(), _query({**params, "watch": True}))
        if resp.status >= 400 or not isinstance(resp, StreamingResponse):
            raise (
                status_error(resp)
                if resp.status >= 400
                else errors.internal_error("the watch was not streamed")
            )
        return Watch(resp, self.transport.watch_events)


class Client:
    """The loopback clientset: `client.resource(group, version, resource).namespace(ns).get(name)`."""

    def __init__(self, transport: LoopbackTransport):
        self.transport = transport

    @property
    def discovery(self) -> DiscoveryClient:
        from .discovery import DiscoveryClient  # it builds on this module's transport

        return DiscoveryClient(self.transport)

    @property
    def token(self) -> str:
        return self.transport.token

    def attach(self, handler: Handler) -> None:
        self.transport.attach(handler)

    def resource(self, group: str, version: str, resource: str) -> ResourceClient:
        return ResourceClient(self.transport, group, version, resource)
