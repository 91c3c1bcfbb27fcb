"""Discovery of the aggregated API servers (k8s.io/kube-aggregator pkg/apiserver/handler_discovery.go):
each remote APIService's version is fetched through its proxy handler, aggregated (v2) when the server
offers it, else its APIResourceList converted; one fetch per service serves all its APIServices. Every
entry is marked Current, or Stale when the last fetch failed; all are fetched again every minute."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..apimachinery.wait import Periodic
from ..endpoints.http import Request, Response, StreamingResponse
from ..endpoints.request_info import new_request_info
from ..registry.context import UserInfo
from .helpers import name_to_group_version, service_of, service_port, spec_of
from .priorities import Priority
from .proxy import ProxyHandler
from .workqueue import Workers, WorkQueue

log = logging.getLogger("kube_apiserver.aggregator")
Object = dict[str, Any]
ACCEPT_V2 = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
             "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")
FETCH_TIMEOUT = 5.0
REFRESH_SECONDS = 60.0
MASTERS = UserInfo("system:kube-aggregator", groups=("system:masters",))
AGGREGATOR = UserInfo("system:kube-aggregator")


@dataclass
class ServiceInfo:
    service: tuple[str, str, int]  # namespace, name, port: APIServices sharing it share one fetch
    priority: Priority
    handler: ProxyHandler
    dirty_at: float = field(default_factory=time.monotonic)


@dataclass
class Cached:
    discovery: dict[tuple[str, str], Object]  # group version -> aggregated version entry
    etag: str = ""
    updated_at: float = field(default_factory=time.monotonic)


def convert_resources(resources: list[Object]) -> list[Object]:
    """ConvertGroupVersionIntoToDiscovery: an APIResourceList's resources, subresources under theirs."""
    parents: dict[str, Object] = {}
    for r in resources:
        if "/" in r.get("name", ""):
            continue
        entry: Object = {"resource": r["name"], "responseKind": _kind(r),
                         "scope": "Namespaced" if r.get("namespaced") else "Cluster",
                         "singularResource": r.get("singularName", ""), "verbs": r.get("verbs") or []}
        for key in ("shortNames", "categories"):
            if r.get(key):
                entry[key] = r[key]
        parents[r["name"]] = entry
    for r in resources:
        parent, slash, sub = r.get("name", "").partition("/")
        if not slash:
            continue
        owner = parents.setdefault(parent, {"resource": parent, "responseKind": {},
                                            "scope": "Namespaced" if r.get("namespaced") else "Cluster"})
        owner.setdefault("subresources", []).append(
            {"subresource": sub, "responseKind": _kind(r) if r.get("kind") else {}, "verbs": r.get("verbs") or []})
    return list(parents.values())


def _kind(r: Object) -> Object:
    return {"group": r.get("group", ""), "version": r.get("version", ""), "kind": r.get("kind", "")}


async def _body(resp: Response) -> bytes:
    if isinstance(resp, StreamingResponse):
        return b"".join([chunk async for chunk in resp.chunks])
    return resp.body


def _header(resp: Response, name: str) -> str:
    return next((v for k, v in resp.headers if k.lower() == name), "")


class RemoteDiscovery:
    def __init__(self) -> None:
        self.services: dict[str, ServiceInfo] = {}  # APIService name -> how to fetch it
        self.cache: dict[tuple[str, str, int], Cached] = {}
        self.entries: dict[tuple[str, str], tuple[Object, Priority]] = {}
        self.queue = WorkQueue("discovery-manager")
        self._workers = Workers(self.queue, self.sync, count=2)
        self._refresh = Periodic("aggregated discovery refresh", REFRESH_SECONDS, self.mark_all_dirty)

    def add_api_service(self, obj: Object, handler: ProxyHandler) -> None:
        ref = service_of(obj)
        if ref is None:
            return
        spec = spec_of(obj)
        self.services[obj["metadata"]["name"]] = ServiceInfo(
            (ref.get("namespace", ""), ref.get("name", ""), service_port(ref)),
            Priority(spec.get("groupPriorityMinimum", 0), spec.get("versionPriority", 0)), handler)
        self._remove_unused()
        self.queue.add(obj["metadata"]["name"])

    def remove_api_service(self, name: str) -> None:
        if self.services.pop(name, None) is not None:
            self._remove_unused()
            self.queue.add(name)

    def _remove_unused(self) -> None:
        used = {info.service for info in self.services.values()}
        self.cache = {key: value for key, value in self.cache.items() if key in used}

    async def run(self) -> None:
        await asyncio.gather(*(self.sync(name) for name in list(self.services)))
        self._workers.start()
        self._refresh.start()

    async def stop(self) -> None:
        await self._refresh.stop()
        await self._workers.stop()

    async def mark_all_dirty(self) -> None:
        now = time.monotonic()
        for name, info in self.services.items():
            info.dirty_at = now
            self.queue.add(name)

    def snapshot(self) -> dict[tuple[str, str], tuple[Object, Priority]]:
        return dict(self.entries)

    async def sync(self, name: str) -> None:
        group, version = name_to_group_version(name)
        info = self.services.get(name)
        if info is None:
            self.entries.pop((group, version), None)
            return
        cached: Cached | None = None
        try:
            cached = await self._fetch(group, version, info)
            fresh = True
        except Exception as err:  # noqa: BLE001 - served stale until the next fetch succeeds
            log.info("discovery of %s failed: %s", name, err)
            fresh = False
        entry = dict((cached.discovery if cached else {}).get((group, version)) or {"version": version})
        entry["freshness"] = "Current" if fresh else "Stale"
        entry.setdefault("resources", [])
        self.entries[(group, version)] = (entry, info.priority)

    async def _fetch(self, group: str, version: str, info: ServiceInfo) -> Cached:
        cached = self.cache.get(info.service)
        if cached is not None and cached.updated_at > info.dirty_at:
            return cached
        headers = {"accept": ACCEPT_V2}
        if cached is not None and cached.etag:
            headers["if-none-match"] = cached.etag
        resp = await self._get(info.handler, "/apis", headers, MASTERS)
        if resp.status == 304 and cached is not None:
            cached.updated_at = time.monotonic()
            return cached
        if resp.status == 503:
            raise RuntimeError(f"service {info.service} returned non-success response code: 503")
        content_type = _header(resp, "content-type")
        if resp.status == 200 and "as=APIGroupDiscoveryList" in content_type:
            fresh = Cached(self._parse_aggregated(await _body(resp)), _header(resp, "etag"))
            self.cache[info.service] = fresh
            return fresh
        return await self._fetch_legacy(group, version, info)

    @staticmethod
    def _parse_aggregated(body: bytes) -> dict[tuple[str, str], Object]:
        doc = orjson.loads(body)
        return {((item.get("metadata") or {}).get("name", ""), v["version"]): v
                for item in doc.get("items") or [] for v in item.get("versions") or []}

    async def _fetch_legacy(self, group: str, version: str, info: ServiceInfo) -> Cached:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        resp = await self._get(info.handler, path, {"accept": "application/json"}, AGGREGATOR)
        body = await _body(resp)
        if resp.status != 200:
            raise RuntimeError(f"failed to download legacy discovery for {path}: {body.decode(errors='replace')}")
        resources = convert_resources(orjson.loads(body).get("resources") or [])
        return Cached({(group, version): {"version": version, "resources": resources}})

    @staticmethod
    async def _get(handler: ProxyHandler, path: str, headers: dict[str, str], user: UserInfo) -> Response:
        req = Request("GET", path, b"", headers)
        req.info = new_request_info("GET", path, {})
        req.user = user
        async with asyncio.timeout(FETCH_TIMEOUT):
            resp = await handler.serve(req)
            if isinstance(resp, StreamingResponse):
                resp = Response(resp.status, await _body(resp), "", resp.headers)
            return resp
