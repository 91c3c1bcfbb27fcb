"""The aggregated API servers' resources as the controllers discover them (what client-go's
ServerPreferredResources finds through the aggregator): for each group, its APIServices in priority
order, each resource from the first version that lists it, acted on through the APIService's proxy
handler. An APIService whose server is unavailable (or whose discovery failed) is a failed group version,
with the message client-go gives a 503."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from ..aggregator.helpers import is_available, service_of, sorted_by_group_and_version, spec_of
from ..aggregator.proxy import ProxyHandler
from ..apimachinery import errors
from ..endpoints.http import Request, Response, StreamingResponse
from ..endpoints.request_info import new_request_info
from .discovery import Discovered, DiscoveredResource, Source
from .informer import CONTROLLER_USER

Object = dict[str, Any]
UNAVAILABLE = "the server is currently unable to handle the request"
REQUEST_TIMEOUT = 30.0
BACKGROUND = orjson.dumps({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"})


class ProxiedResource:
    """One aggregated resource's list and delete calls, sent in-process through its proxy handler."""

    def __init__(self, handler: ProxyHandler, group: str, version: str, resource: str):
        self.handler = handler
        self.prefix = f"/apis/{group}/{version}"
        self.resource = resource

    def _path(self, namespace: str, name: str = "") -> str:
        return f"{self.prefix}/namespaces/{namespace}/{self.resource}" + (f"/{name}" if name else "")

    async def list(self, namespace: str) -> list[Object]:
        return (await self._call("GET", self._path(namespace))).get("items") or []

    async def delete_collection(self, namespace: str) -> None:
        await self._call("DELETE", self._path(namespace), BACKGROUND)

    async def delete(self, namespace: str, name: str) -> None:
        await self._call("DELETE", self._path(namespace, name), BACKGROUND)

    async def _call(self, method: str, path: str, body: bytes = b"") -> Object:
        headers = {"accept": "application/json", "content-type": "application/json"}
        req = Request(method, path, b"", headers, body=body)
        req.info = new_request_info(method, path, {})
        req.user = CONTROLLER_USER
        async with asyncio.timeout(REQUEST_TIMEOUT):
            resp = await self.handler.serve(req)
            payload = await _body(resp)
        doc = _json(payload)
        if resp.status >= 300:
            raise _status_error(resp.status, doc)
        return doc


def aggregated_resources(aggregator: Any) -> Source:
    """A discovery source over the aggregator's (aggregator.server.APIAggregator) remote APIServices."""

    def discover() -> Discovered:
        out = Discovered()
        remote = [s for s in aggregator.lister.list() if service_of(s) is not None]
        for members in sorted_by_group_and_version(remote):
            chosen: set[str] = set()
            for api_service in members:
                group, version = spec_of(api_service).get("group", ""), spec_of(api_service).get("version", "")
                entry = aggregator.remote_discovery.entries.get((group, version), ({}, None))[0]
                handler = aggregator.proxy_handlers.get(api_service["metadata"]["name"])
                if not is_available(api_service) or handler is None or entry.get("freshness") != "Current":
                    out.failed[f"{group}/{version}"] = UNAVAILABLE
                    continue
                for r in entry.get("resources") or []:
                    name = r.get("resource", "")
                    if name and name not in chosen:
                        chosen.add(name)
                        out.resources.append(DiscoveredResource(
                            group, version, name, r.get("scope") == "Namespaced", frozenset(r.get("verbs") or ()),
                            ProxiedResource(handler, group, version, name)))
        return out

    return discover


async def _body(resp: Response) -> bytes:
    if isinstance(resp, StreamingResponse):
        return b"".join([chunk async for chunk in resp.chunks])
    return resp.body


def _json(payload: bytes) -> Object:
    try:
        doc = orjson.loads(payload) if payload else {}
    except orjson.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _status_error(code: int, doc: Object) -> errors.StatusError:
    """client-go's reading of an error answer: its Status when it sent one, else the generic text."""
    if doc.get("kind") == "Status" and doc.get("message"):
        return errors.StatusError(code, doc.get("reason", ""), doc["message"], doc.get("details"))
    generic = {503: UNAVAILABLE, 404: "the server could not find the requested resource",
               405: "the server does not allow this method on the requested resource"}
    return errors.StatusError(code, "", generic.get(code, f"an error on the server has prevented the request "
                                                           f"from succeeding (status {code})"))
