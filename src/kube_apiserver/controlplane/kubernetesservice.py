"""The `kubernetes` Service in `default` and its Endpoints and EndpointSlice, pointing at this server's
advertise address and secure port (pkg/controlplane/controller/kubernetesservice, with the endpoints
of reconcilers.EndpointsAdapter). The Service is created when missing, never reconciled; the endpoints
(addresses and ports) are reset every interval when they differ. Which addresses they list is the
endpoint reconciler's (reconcilers.py: with `lease`, every live replica's); a clean stop takes this
replica's address out (RemoveEndpoints). The allocation repair is api/core/service/repair.py's."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from ..apimachinery.wait import Periodic
from ..registry.context import Context
from ..registry.rest import UpdatedObjectInfo
from ..registry.store import Store
from ..server.restful import APIContainer
from .bootstrap import SYSTEM_USER
from .reconcilers import EndpointReconciler, MasterCountReconciler, address_type

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
NAME = "kubernetes"
NAMESPACE = "default"
PORT_NAME = "https"
SERVICE_PORT = 443
INTERVAL_SECONDS = 10.0  # --endpoint-reconciler interval
SYNC_ATTEMPTS = 3
# a Service create that lost its cluster IP to another replica reads the Service again for up to a second
RACE_READS, RACE_READ_INTERVAL = 20, 0.05
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclass(frozen=True)
class KubernetesServiceConfig:
    service_ip: str
    public_ip: str
    public_port: Callable[[], int]
    reconciler: EndpointReconciler = field(default_factory=lambda: MasterCountReconciler(1))
    interval: float = INTERVAL_SECONDS


class KubernetesServiceController:
    def __init__(self, restful: APIContainer, config: KubernetesServiceConfig):
        self.restful = restful
        self.config = config
        self._periodic = Periodic("kubernetes service controller", config.interval, self.sync)
        self._last_error = ""
        self._loopback_noted = False

    def _store(self, group: str, resource: str) -> Store:
        return self.restful.group_versions[(group, "v1")][resource].scope.storage

    @staticmethod
    def _ctx() -> Context:
        return Context(NAMESPACE, SYSTEM_USER)

    async def start(self) -> None:
        await self.sync()
        self._periodic.start()

    async def stop(self) -> None:
        """Stops reconciling, then takes this replica's address out of the endpoints, waiting at most two
        intervals for it (kube-apiserver's Controller.Stop)."""
        await self.stop_reconciling()
        if not self._publishes_endpoints():
            return
        try:
            await asyncio.wait_for(self._remove_endpoints(), 2 * self.config.interval)
        except (errors.StatusError, TimeoutError) as err:
            log.error("Unable to remove endpoints from kubernetes service: %s", getattr(err, "message", err))

    async def stop_reconciling(self) -> None:
        """Stops renewing this replica's presence (and its reconciling), leaving it listed until it expires."""
        await self._periodic.stop()

    async def _remove_endpoints(self) -> None:
        addresses = await self.config.reconciler.remove(self.config.public_ip, await self._current_addresses())
        if addresses is not None:
            await self.ensure_endpoints(addresses)
            await self.ensure_endpoint_slice(addresses)

    def _publishes_endpoints(self) -> bool:
        """Kubernetes' Endpoints validation refuses a loopback address, so kube-apiserver advertising
        127.0.0.1 logs a sync error every interval. A local server advertises loopback by default, so here
        the Service is kept and its endpoints are not published (no pod could reach them anyway), which
        is said once, at info level."""
        if not ipaddress.ip_address(self.config.public_ip).is_loopback:
            return True
        if not self._loopback_noted:
            log.info("not publishing endpoints of the kubernetes service: the advertise address %s is in the "
                     "loopback range (set --advertise-address to a routable address to publish them)",
                     self.config.public_ip)
            self._loopback_noted = True
        return False

    async def sync(self) -> None:
        """UpdateKubernetesService; a failure is logged and tried again at the next interval. Replicas
        starting together race to create and update the same objects: a conflict is read again at once."""
        for attempt in range(SYNC_ATTEMPTS):
            try:
                await self._sync_once()
            except (errors.StatusError, ConnectionError) as err:  # ConnectionError: the store out of reach
                if isinstance(err, errors.StatusError) and err.code == 409 and attempt + 1 < SYNC_ATTEMPTS:
                    continue
                message = f"unable to sync kubernetes service: {getattr(err, 'message', err)}"
                log.log(logging.DEBUG if message == self._last_error else logging.ERROR, message)
                self._last_error = message
                return
            self._last_error = ""
            return

    async def _sync_once(self) -> None:
        if self.config.service_ip:
            await self.ensure_service()
        if self._publishes_endpoints():
            current = await self._current_addresses()
            addresses = await self.config.reconciler.addresses(self.config.public_ip, current)
            if addresses is not None:
                await self.ensure_endpoints(addresses)
                await self.ensure_endpoint_slice(addresses)

    def service(self) -> Object:
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": NAME, "namespace": NAMESPACE,
                             "labels": {"component": "apiserver", "provider": "kubernetes"}},
                "spec": {"ports": [{"name": PORT_NAME, "port": SERVICE_PORT, "protocol": "TCP",
                                    "targetPort": self.config.public_port()}],
                         "clusterIP": self.config.service_ip, "ipFamilyPolicy": "SingleStack",
                         "sessionAffinity": "None", "type": "ClusterIP"}}

    async def ensure_service(self) -> None:
        store = self._store("", "services")
        if await self._get(store, NAME) is not None:
            return
        obj = self.service()
        store.strategy.default(obj)
        try:
            await store.create(self._ctx(), obj)
            log.info("created the kubernetes service with cluster IP %s", self.config.service_ip)
        except errors.StatusError:
            # Another replica created it meanwhile: its name was then taken (409), or its cluster IP (422),
            # which that replica allocates before it writes the Service: give its write a moment.
            for _ in range(RACE_READS):
                if await self._get(store, NAME) is not None:
                    return
                await asyncio.sleep(RACE_READ_INTERVAL)
            raise

    def _port(self) -> Object:
        return {"name": PORT_NAME, "port": self.config.public_port(), "protocol": "TCP"}

    async def _current_addresses(self) -> list[str]:
        current = await self._get(self._store("", "endpoints"), NAME)
        subsets = (current or {}).get("subsets") or []
        return [a["ip"] for a in (subsets[0].get("addresses") or []) if a.get("ip")] if len(subsets) == 1 else []

    async def ensure_endpoints(self, addresses: list[str]) -> None:
        store = self._store("", "endpoints")
        current = await self._get(store, NAME)
        wanted = {"apiVersion": "v1", "kind": "Endpoints",
                  "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SKIP_MIRROR: "true"}},
                  "subsets": [{"addresses": [{"ip": ip} for ip in addresses], "ports": [self._port()]}]}
        if current is None or current.get("subsets") != wanted["subsets"] or \
                current["metadata"].get("labels") != wanted["metadata"]["labels"]:
            await self._put(store, current, wanted)

    async def ensure_endpoint_slice(self, addresses: list[str]) -> None:
        store = self._store("discovery.k8s.io", "endpointslices")
        current = await self._get(store, NAME)
        wanted = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                  "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SERVICE_NAME_LABEL: NAME}},
                  "addressType": address_type(self.config.public_ip),
                  "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in addresses],
                  "ports": [self._port()]}
        if current is None or any(current.get(k) != wanted[k] for k in ("endpoints", "ports", "addressType")) or \
                current["metadata"].get("labels") != wanted["metadata"]["labels"]:
            await self._put(store, current, wanted)

    async def _get(self, store: Store, name: str) -> Object | None:
        try:
            return await store.get(self._ctx(), name)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    async def _put(self, store: Store, current: Object | None, wanted: Object) -> None:
        store.strategy.default(wanted)
        if current is None:
            await store.create(self._ctx(), wanted)
            return

        async def replace(_ctx: Context, old: Object | None) -> Object:
            return dict(wanted, metadata={**(old or current)["metadata"], "labels": wanted["metadata"]["labels"]})

        log.info("resetting the %s of the kubernetes service", wanted["kind"])
        await store.update(self._ctx(), NAME, UpdatedObjectInfo(NAME, replace))

