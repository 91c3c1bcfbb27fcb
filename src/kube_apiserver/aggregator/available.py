"""The Available condition of APIServices (k8s.io/kube-aggregator pkg/controllers/status/local and
remote): local ones are always available; a remote one is available when its service exists, listens
on the port, has ready endpoints, and answers discovery. Checked on every change of the APIService, its
service or its endpoints, and again every resync period."""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import TYPE_CHECKING, Any

from ..admission.webhook.serviceresolution import SERVICE_NAME_LABEL, ResolveError, ServiceLookup, ready
from ..apimachinery import errors
from ..apimachinery.field import go_quote
from ..apimachinery.meta import now_rfc3339
from ..controllers.informer import Informer, Resource
from ..lazyimport import lazy_import
from ..registry.context import Context
from ..registry.rest import UpdatedObjectInfo
from .autoregister import AGGREGATOR_USER
from .helpers import (
    AVAILABLE,
    LEGACY_API_SERVICE_NAME,
    local_available_condition,
    service_of,
    service_port,
    set_condition,
    spec_of,
)
from .lister import APIServiceLister
from .transport import Transport, auth_proxy_headers, go_error
from .workqueue import Workers, WorkQueue

if TYPE_CHECKING:
    import aiohttp
else:
    aiohttp = lazy_import("aiohttp")  # ~0.2 s: only a remote APIService is probed over HTTPS

log = logging.getLogger("kube_apiserver.aggregator")
Object = dict[str, Any]
DISCOVERY_ATTEMPTS = 5
CLIENT_TIMEOUT = 5.0  # "the request should happen quickly"
ATTEMPT_TIMEOUT = 6.0  # insurance against slow dials


class Unavailable(Exception):
    """A failed check: the condition's status, reason and message."""

    def __init__(self, status: str, reason: str, message: str, retry: bool = False):
        super().__init__(message)
        self.status, self.reason, self.message, self.retry = status, reason, message, retry


class StatusWriter:
    """updateAPIServiceStatus: writes only when the status changed."""

    def __init__(self, status_store: Any):
        self.status_store = status_store

    async def write(self, original: Object, updated: Object) -> None:
        if original.get("status") == updated.get("status"):
            return
        name = updated["metadata"]["name"]
        log.info("changing APIService %s availability: %s", name, (updated.get("status") or {}).get("conditions"))

        async def transform(ctx: Context, old: Object | None) -> Object:
            return copy.deepcopy(updated)
        await self.status_store.update(Context(user=AGGREGATOR_USER), name, UpdatedObjectInfo(name, transform))


class LocalAvailableController:
    """Local APIServices: Available=True, reason Local."""

    def __init__(self, lister: APIServiceLister, status_store: Any):
        self.lister, self.writer = lister, StatusWriter(status_store)
        self.queue = WorkQueue("LocalAvailabilityController")
        self._workers = Workers(self.queue, self.sync, count=5)
        lister.add_handler(lambda _event, obj: self.queue.add(obj["metadata"]["name"]))

    async def run(self) -> None:
        await self.lister.start()
        self._workers.start()

    async def stop(self) -> None:
        await self._workers.stop()

    async def sync(self, name: str) -> None:
        original = self.lister.get(name)
        if original is None or service_of(original) is not None:
            return
        updated = copy.deepcopy(original)
        set_condition(updated, local_available_condition())
        await self.writer.write(original, updated)


class RemoteAvailableController:
    def __init__(self, lister: APIServiceLister, status_store: Any, lookup: ServiceLookup, transport: Transport):
        self.lister, self.writer, self.lookup, self.transport = lister, StatusWriter(status_store), lookup, transport
        self.queue = WorkQueue("RemoteAvailabilityController")
        self._workers = Workers(self.queue, self.sync, count=5)
        lister.add_handler(lambda _event, obj: self.queue.add(obj["metadata"]["name"]))
        self._informers = [Informer(Resource(group, "v1", resource, kind, True, store), self._on_backend_event)
                           for group, resource, kind, store in (
                               ("", "services", "Service", lookup.services),
                               ("discovery.k8s.io", "endpointslices", "EndpointSlice", lookup.slices),
                               ("", "endpoints", "Endpoints", lookup.endpoints)) if store is not None]

    async def run(self) -> None:
        await self.lister.start()
        for informer in self._informers:
            informer.start()
        self._workers.start()

    async def stop(self) -> None:
        await self._workers.stop()
        for informer in self._informers:
            await informer.stop()

    async def _on_backend_event(self, resource: Resource, event_type: str, obj: Object) -> None:
        """A service, its slices or its endpoints changed: check the APIServices that use it again."""
        meta = obj.get("metadata") or {}
        service = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL, "") if resource.resource == "endpointslices" \
            else meta.get("name", "")
        for api_service in self.lister.list():
            ref = service_of(api_service)
            if ref and ref.get("namespace") == meta.get("namespace") and ref.get("name") == service:
                self.queue.add(api_service["metadata"]["name"])

    async def sync(self, name: str) -> None:
        original = self.lister.get(name)
        if original is None or service_of(original) is None:
            return  # gone, or handled by the local controller
        updated = copy.deepcopy(original)
        condition = {"type": AVAILABLE, "status": "True", "lastTransitionTime": now_rfc3339(),
                     "reason": "Passed", "message": "all checks passed"}
        failure: Unavailable | None = None
        try:
            await self.check(original)
        except Unavailable as err:
            failure = err
            condition.update(status=err.status, reason=err.reason, message=err.message)
        set_condition(updated, condition)
        await self.writer.write(original, updated)
        if failure is not None and failure.retry:
            raise failure  # requeued, as the discovery check failing is worth retrying soon

    async def check(self, api_service: Object) -> None:
        ref = service_of(api_service) or {}
        namespace, name, port = ref.get("namespace", ""), ref.get("name", ""), service_port(ref)
        where = f"service/{name} in {go_quote(namespace)}"
        try:
            service = await self.lookup.service(namespace, name)
        except errors.StatusError as err:
            raise Unavailable("Unknown", "ServiceAccessError",
                              f"{where} cannot be checked due to: {err.message}") from None
        if service is None:
            raise Unavailable("False", "ServiceNotFound", f"{where} is not present")
        if ((service.get("spec") or {}).get("type") or "ClusterIP") == "ClusterIP":
            await self._check_endpoints(service, namespace, name, port, where)
        await self._check_discovery(api_service, namespace, name, port)

    async def _check_endpoints(self, service: Object, namespace: str, name: str, port: int, where: str) -> None:
        service_port_ = next((p for p in (service.get("spec") or {}).get("ports") or [] if p.get("port") == port),
                             None)
        if service_port_ is None:
            raise Unavailable("False", "ServicePortError", f"{where} is not listening on port {port}")
        port_name = service_port_.get("name") or ""
        try:
            slices = await self.lookup.endpoint_slices(namespace, name)
        except errors.StatusError as err:
            raise Unavailable("Unknown", "EndpointsAccessError",
                              f"{where} cannot be checked due to: {err.message}") from None
        if not slices:
            raise Unavailable("False", "EndpointsNotFound", f"cannot find endpointslices for {where}")
        for endpoint_slice in slices:
            if not any(ready(e) for e in endpoint_slice.get("endpoints") or []):
                continue
            if any(p.get("name") == port_name and p.get("port") is not None for p in endpoint_slice.get("ports") or []):
                return
        raise Unavailable("False", "MissingEndpoints",
                          f"endpointslices for {where} have no addresses with port name {go_quote(port_name)}")

    async def _check_discovery(self, api_service: Object, namespace: str, name: str, port: int) -> None:
        """Five attempts at once at the discovery document the aggregated server must serve; the first
        success is enough (the others are not waited for, as upstream stops reading their results)."""
        attempts = [
            asyncio.ensure_future(self._attempt(api_service, namespace, name, port))
            for _ in range(DISCOVERY_ATTEMPTS)
        ]
        last_error = ""
        try:
            for attempt in asyncio.as_completed(attempts):
                last_error = await attempt
                if not last_error:
                    return
        finally:
            for attempt in attempts:
                attempt.cancel()
            await asyncio.gather(*attempts, return_exceptions=True)
        raise Unavailable("False", "FailedDiscoveryCheck", last_error, retry=True)

    async def _attempt(self, api_service: Object, namespace: str, name: str, port: int) -> str:
        """'' on success, else why not."""
        try:
            host, endpoint_port = await self.lookup.resolve_endpoint(namespace, name, port)
        except ResolveError as err:
            return str(err)
        spec = spec_of(api_service)
        path = f"/api/{spec.get('version', '')}" if api_service["metadata"]["name"] == LEGACY_API_SERVICE_NAME \
            else f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"
        address = f"[{host}]" if ":" in host else host
        url = f"https://{address}:{endpoint_port}{path}"
        try:
            async with asyncio.timeout(ATTEMPT_TIMEOUT):
                return await self._get(url, host, endpoint_port)
        except TimeoutError:
            return f"timed out waiting for {url}"

    async def _get(self, url: str, host: str, port: int) -> str:
        # The system:masters identity: the check is never refused for want of rights.
        headers = auth_proxy_headers((), AGGREGATOR_USER)
        try:
            async with self.transport.session().get(
                    url, headers=headers, ssl=self.transport.tls("", True), allow_redirects=False,
                    timeout=aiohttp.ClientTimeout(total=CLIENT_TIMEOUT)) as response:
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as err:
            return f'failing or missing response from {url}: Get "{url}": {go_error(err, host, port)}'
        if not 200 <= status < 300:
            return f"failing or missing response from {url}: bad status from {url}: {status}"
        return ""
