"""The endpointslicemirroring controller (pkg/controller/endpointslicemirroring): the Endpoints of a
Service without a selector (written by hand) mirrored into EndpointSlices owned by the Endpoints, one
slice per subset's ports and address type, at most --mirroring-max-endpoints-per-subset addresses each
(ready ones first); the Endpoints' labels and annotations copied. Endpoints labelled
endpointslice.kubernetes.io/skip-mirror=true, leader-election records, and those of Services with a
selector or of no Service are not mirrored (their mirrored slices are deleted)."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from ...apimachinery import errors
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import WARNING, EventRecorder
from ...client.rest import Client
from ..controller_utils import NAMESPACE_TERMINATING_CAUSE
from ..endpoint import repack_subsets
from ..queue_controller import QueueController
from .config import DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET as DEFAULT_MAX_ENDPOINTS_PER_SUBSET
from .controller import EndpointSliceTracker, StaleInformerCacheError, service_key_of_slice
from .endpointutil import LAST_CHANGE_TRIGGER_TIME, LEADER_ANNOTATION
from .reconciler import MANAGED_BY_LABEL, SERVICE_NAME_LABEL, Changes, endpoint_key, slice_prefix

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
COMPONENT = "endpoint-slice-mirroring-controller"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
PortKey = tuple[tuple[tuple[str, int, str, str], ...], str]


def should_mirror(endpoints: Object | None) -> bool:
    if endpoints is None:
        return False
    meta = endpoints["metadata"]
    if (meta.get("labels") or {}).get(SKIP_MIRROR_LABEL) == "true":
        return False
    return LEADER_ANNOTATION not in (meta.get("annotations") or {})


def _address_type(ip: str) -> str | None:
    try:
        parsed = ipaddress.ip_address(ip)
    except ValueError:
        return None
    return "IPv6" if parsed.version == 6 else "IPv4"


def _slice_ports(ports: list[Object]) -> list[Object]:
    """epPortsToEpsPorts."""
    out = []
    for port in ports:
        converted: Object = {
            "name": port.get("name") or "",
            "port": port.get("port"),
            "protocol": port.get("protocol") or "TCP",
        }
        if port.get("appProtocol"):
            converted["appProtocol"] = port["appProtocol"]
        out.append(converted)
    return out


def _endpoint(address: Object, ready: bool) -> Object:
    """addressToEndpoint: the address, its readiness, targetRef, nodeName and hostname."""
    endpoint: Object = {"addresses": [address.get("ip", "")], "conditions": {"ready": ready}}
    if address.get("hostname"):
        endpoint["hostname"] = address["hostname"]
    if address.get("targetRef"):
        endpoint["targetRef"] = address["targetRef"]
    if address.get("nodeName") is not None:
        endpoint["nodeName"] = address["nodeName"]
    return endpoint


def _mirrored_annotations(endpoints: Object) -> dict[str, str]:
    annotations = dict(endpoints["metadata"].get("annotations") or {})
    annotations.pop(LAST_CHANGE_TRIGGER_TIME, None)
    annotations.pop(LAST_APPLIED, None)
    return annotations


def new_mirrored_slice(endpoints: Object, ports: list[Object], address_type: str, name: str) -> Object:
    meta = endpoints["metadata"]
    labels = dict(meta.get("labels") or {})
    labels[SERVICE_NAME_LABEL] = meta["name"]
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    slice_meta: Object = {
        "namespace": meta.get("namespace", ""),
        "labels": labels,
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "name": meta["name"],
                "uid": meta.get("uid", ""),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    annotations = _mirrored_annotations(endpoints)
    if annotations:
        slice_meta["annotations"] = annotations
    if name:
        slice_meta["name"] = name
    else:
        slice_meta["generateName"] = slice_prefix(meta["name"])
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": slice_meta,
        "addressType": address_type,
        "endpoints": [],
        "ports": ports,
    }


def _slice_key(endpoint_slice: Object) -> PortKey:
    ports = tuple(
        sorted(
            (
                p.get("name") or "",
                int(p.get("port") or 0),
                p.get("protocol") or "",
                p.get("appProtocol") or "",
            )
            for p in endpoint_slice.get("ports") or ()
        )
    )
    return ports, endpoint_slice.get("addressType") or ""


class MirroringReconciler:
    def __init__(
        self, recorder: EventRecorder, max_endpoints_per_subset: int = DEFAULT_MAX_ENDPOINTS_PER_SUBSET
    ):
        self.recorder = recorder
        self.max_endpoints_per_subset = max_endpoints_per_subset

    def reconcile(self, endpoints: Object, existing: list[Object]) -> Changes:
        desired, ports_of = self._desired(endpoints)
        existing_by_key: dict[PortKey, list[Object]] = {}
        for endpoint_slice in existing:
            existing_by_key.setdefault(_slice_key(endpoint_slice), []).append(endpoint_slice)
        changes = Changes()
        for key, wanted in desired.items():
            self._reconcile_key(
                endpoints, existing_by_key.get(key, []), wanted, ports_of[key], key[1], changes
            )
        for key, slices in existing_by_key.items():
            if key not in desired:
                changes.delete.extend(slices)
        return changes

    def _desired(
        self, endpoints: Object
    ) -> tuple[dict[PortKey, dict[Any, Object]], dict[PortKey, list[Object]]]:
        desired: dict[PortKey, dict[Any, Object]] = {}
        ports_of: dict[PortKey, list[Object]] = {}
        invalid = skipped = 0
        limit = self.max_endpoints_per_subset
        for subset in repack_subsets(endpoints.get("subsets") or []):
            ports = _slice_ports(subset.get("ports") or [])
            added = 0
            total = len(subset.get("addresses") or ()) + len(subset.get("notReadyAddresses") or ())
            for field_name, ready in (("addresses", True), ("notReadyAddresses", False)):
                for address in subset.get(field_name) or ():
                    if added >= limit:
                        break
                    address_type = _address_type(address.get("ip", ""))
                    if address_type is None:
                        invalid += 1
                        continue
                    key = _slice_key({"ports": ports, "addressType": address_type})
                    ports_of.setdefault(key, ports)
                    endpoint = _endpoint(address, ready)
                    desired.setdefault(key, {})[endpoint_key(endpoint)] = endpoint
                    added += 1
            skipped += total - added
        if invalid:
            self.recorder.event(
                endpoints,
                WARNING,
                "InvalidIPAddress",
                f"Skipped {invalid} invalid IP addresses when mirroring to EndpointSlices",
            )
        if skipped > invalid:
            self.recorder.event(
                endpoints,
                WARNING,
                "TooManyAddressesToMirror",
                f"A max of {limit} addresses can be mirrored to EndpointSlices per Endpoints subset. "
                f"{skipped} addresses were skipped",
            )
        return desired, ports_of

    def _reconcile_key(
        self,
        endpoints: Object,
        existing: list[Object],
        wanted: dict[Any, Object],
        ports: list[Object],
        address_type: str,
        changes: Changes,
    ) -> None:
        """reconcileByPortMapping: one slice per key; the first existing one is rewritten when it differs."""
        if not wanted:
            changes.delete.extend(existing)
            return
        name = ""
        if existing:
            changes.delete.extend(existing[1:])
            first = existing[0]
            labels = {
                k: v
                for k, v in (first["metadata"].get("labels") or {}).items()
                if k not in (MANAGED_BY_LABEL, SERVICE_NAME_LABEL)
            }
            current = {endpoint_key(e): e for e in first.get("endpoints") or ()}
            if (
                current == wanted
                and labels == (endpoints["metadata"].get("labels") or {})
                and (first["metadata"].get("annotations") or {}) == _mirrored_annotations(endpoints)
            ):
                return
            name = first["metadata"]["name"]
        new = new_mirrored_slice(endpoints, ports, address_type, name)
        new["endpoints"] = list(wanted.values())[: self.max_endpoints_per_subset]
        (changes.update if name else changes.create).append(new)


class EndpointSliceMirroringController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        max_endpoints_per_subset: int = DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
        workers: int = 5,
    ):
        super().__init__("endpointslicemirroring", client, recorder, workers)
        self.services = informers.for_resource("", "v1", "services")
        self.endpoints = informers.for_resource("", "v1", "endpoints")
        self.slices = informers.for_resource("discovery.k8s.io", "v1", "endpointslices")
        self.tracker = EndpointSliceTracker()
        self.reconciler = MirroringReconciler(recorder, max_endpoints_per_subset)
        self.informers = (self.services, self.endpoints, self.slices)

    def register_handlers(self) -> None:
        enqueue = self._enqueue
        self.services.add_event_handler(EventHandler(enqueue, lambda old, new: enqueue(new), enqueue))
        self.endpoints.add_event_handler(EventHandler(enqueue, lambda old, new: enqueue(new), enqueue))
        self.slices.add_event_handler(
            EventHandler(self._slice_changed, lambda old, new: self._slice_changed(new), self._slice_deleted)
        )

    def _enqueue(self, obj: Object) -> None:
        self.queue.add(object_key(obj))

    @staticmethod
    def _managed(endpoint_slice: Object) -> bool:
        labels = endpoint_slice["metadata"].get("labels") or {}
        return labels.get(MANAGED_BY_LABEL) == CONTROLLER_NAME and bool(labels.get(SERVICE_NAME_LABEL))

    def _slice_changed(self, endpoint_slice: Object) -> None:
        if self._managed(endpoint_slice) and self.tracker.should_sync(endpoint_slice):
            self.queue.add(service_key_of_slice(endpoint_slice))

    def _slice_deleted(self, endpoint_slice: Object) -> None:
        if self._managed(endpoint_slice) and not self.tracker.handle_deletion(endpoint_slice):
            self.queue.add(service_key_of_slice(endpoint_slice))

    def _mirrored(self, namespace: str, name: str) -> list[Object]:
        return [
            s
            for s in self.slices.indexer.list(namespace)
            if self._managed(s)
            and s["metadata"]["labels"][SERVICE_NAME_LABEL] == name
            and not s["metadata"].get("deletionTimestamp")
        ]

    async def sync_handler(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        service = self.services.indexer.get(key)
        endpoints = self.endpoints.indexer.get(key)
        if service is None:
            self.tracker.delete_service(key)
        if service is None or (service.get("spec") or {}).get("selector") or not should_mirror(endpoints):
            await self._delete_all(namespace, self._mirrored(namespace, name))
            return
        assert endpoints is not None
        slices = self._mirrored(namespace, name)
        if self.tracker.stale(key, slices):
            raise StaleInformerCacheError("EndpointSlice informer cache is out of date")
        changes = self.reconciler.reconcile(endpoints, slices)
        await self._finalize(endpoints, changes)

    async def _delete_all(self, namespace: str, slices: list[Object]) -> None:
        api = self.client.resource("discovery.k8s.io", "v1", "endpointslices").namespace(namespace)
        for endpoint_slice in slices:
            try:
                await api.delete(endpoint_slice["metadata"]["name"])
            except errors.StatusError as err:
                if err.code != 404:
                    raise
            self.tracker.expect_deletion(endpoint_slice)

    async def _finalize(self, endpoints: Object, changes: Changes) -> None:
        """finalize: a create takes the name of a slice to delete (of the same address type)."""
        i = 0
        while i < len(changes.delete) and changes.create:
            doomed, new = changes.delete[i], changes.create[-1]
            if doomed.get("addressType") == new.get("addressType"):
                new["metadata"]["name"] = doomed["metadata"]["name"]
                new["metadata"].pop("generateName", None)
                changes.update.append(changes.create.pop())
                changes.delete.pop(i)
            else:
                i += 1
        namespace = endpoints["metadata"].get("namespace", "")
        api = self.client.resource("discovery.k8s.io", "v1", "endpointslices").namespace(namespace)
        if not endpoints["metadata"].get("deletionTimestamp"):
            for endpoint_slice in changes.create:
                try:
                    self.tracker.update(await api.create(endpoint_slice))
                except errors.StatusError as err:
                    if any(
                        c.get("type") == NAMESPACE_TERMINATING_CAUSE
                        for c in (err.details or {}).get("causes") or ()
                    ):
                        return
                    raise
        for endpoint_slice in changes.update:
            self.tracker.update(await api.update(endpoint_slice))
        await self._delete_all(namespace, changes.delete)
