"""The endpoint controller (pkg/controller/endpoint): for each Service with a selector, an Endpoints
object of the same name listing the matching pods' addresses (ready ones in `addresses`, the others in
`notReadyAddresses`, all ready with publishNotReadyAddresses) under each service port resolved on the
pod, repacked into subsets of addresses sharing the same ports. At most 1000 addresses are kept (the
over-capacity annotation says so). The Endpoints go when their Service goes; a Service without a
selector keeps the Endpoints written by hand."""

from __future__ import annotations

import copy
import logging
import math
from typing import Any

from ..apimachinery import errors
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.record import WARNING, EventRecorder
from ..client.rest import Client
from .controller_utils import NAMESPACE_TERMINATING_CAUSE, is_pod_ready
from .endpointslice.endpointutil import (
    HEADLESS_LABEL,
    LAST_CHANGE_TRIGGER_TIME,
    LEADER_ANNOTATION,
    PortNotFoundError,
    TriggerTimeTracker,
    find_port,
    format_trigger_time,
    is_ipv6,
    is_service_ip_set,
    pod_ips,
    service_selector,
    services_selecting,
    services_to_update_on_pod_change,
    should_pod_be_in_endpoints,
    should_set_hostname,
)
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
MAX_CAPACITY = 1000
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
TRUNCATED = "truncated"
MANAGED_BY_LABEL = "endpoints.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpoint-controller"
COMPONENT = "endpoint-controller"


class EndpointController(QueueController):
    def __init__(
        self, client: Client, informers: SharedInformerFactory, recorder: EventRecorder, workers: int = 5
    ):
        super().__init__("endpoint", client, recorder, workers)
        self.services = informers.for_resource("", "v1", "services")
        self.pods = informers.for_resource("", "v1", "pods")
        self.endpoints = informers.for_resource("", "v1", "endpoints")
        self.trigger_times = TriggerTimeTracker()
        self.informers = (self.services, self.pods, self.endpoints)

    def register_handlers(self) -> None:
        self.services.add_event_handler(
            EventHandler(self._enqueue, lambda old, new: self._enqueue(new), self._enqueue)
        )
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._add_pod))
        self.endpoints.add_event_handler(EventHandler(on_delete=self._enqueue))

    def worker_syncs(self) -> list[Any]:
        return [self._check_leftover_endpoints, *super().worker_syncs()]

    async def _check_leftover_endpoints(self) -> None:
        """checkLeftoverEndpoints: once at start, every Endpoints is looked at, so that those whose
        Service went while no controller ran are deleted (not a leader-election record)."""
        for endpoints in self.endpoints.indexer.list():
            if LEADER_ANNOTATION not in (endpoints["metadata"].get("annotations") or {}):
                self.queue.add(object_key(endpoints))

    # ---- informer handlers ----

    def _enqueue(self, obj: Object) -> None:
        self.queue.add(object_key(obj))

    def _services_of(self, pod: Object) -> list[Object]:
        return self.services.indexer.list(pod["metadata"].get("namespace", ""))

    def _add_pod(self, pod: Object) -> None:
        for key in services_selecting(self._services_of(pod), pod):
            self.queue.add(key)

    def _update_pod(self, old: Object, new: Object) -> None:
        for key in services_to_update_on_pod_change(self._services_of(new), old, new):
            self.queue.add(key)

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        service = self.services.indexer.get(key)
        namespace, _, name = key.partition("/")
        if service is None:
            await self._delete_endpoints(namespace, name)
            self.trigger_times.delete(key)
            return
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return
        selector = service_selector(service)
        if selector is None:
            return  # its Endpoints are written by hand
        pods = [
            p
            for p in self.pods.indexer.list(namespace)
            if selector.matches(p["metadata"].get("labels") or {})
        ]
        trigger_time = self.trigger_times.compute(key, service, pods)
        subsets = repack_subsets(self._subsets(service, pods))
        current = self.endpoints.indexer.get(key)
        desired_labels = dict(service["metadata"].get("labels") or {})
        if current is not None and _up_to_date(current, subsets, desired_labels):
            return
        endpoints = self._desired(service, current, subsets, desired_labels, trigger_time)
        await self._write(service, endpoints, create=current is None)

    def _subsets(self, service: Object, pods: list[Object]) -> list[Object]:
        spec = service.get("spec") or {}
        publish_not_ready = bool(spec.get("publishNotReadyAddresses"))
        ports = spec.get("ports") or []
        subsets: list[Object] = []
        for pod in pods:
            if not should_pod_be_in_endpoints(pod, publish_not_ready):
                continue
            address = _address(service, pod)
            if address is None:
                continue
            ready = publish_not_ready or is_pod_ready(pod)
            field_name = "addresses" if ready else "notReadyAddresses"
            if not ports:
                if spec.get("clusterIP") == "None":  # a headless Service may have no ports
                    subsets.append({field_name: [address], "ports": []})
                continue
            for service_port in ports:
                try:
                    number = find_port(pod, service_port)
                except PortNotFoundError as err:
                    log.debug("endpoint: service %s: %s", object_key(service), err)
                    continue
                subsets.append({field_name: [address], "ports": [_endpoint_port(service_port, number)]})
        return subsets

    def _desired(
        self,
        service: Object,
        current: Object | None,
        subsets: list[Object],
        labels: dict[str, str],
        trigger_time: float | None,
    ) -> Object:
        if current is None:
            endpoints: Object = {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {
                    "name": service["metadata"]["name"],
                    "namespace": service["metadata"].get("namespace", ""),
                },
            }
        else:
            endpoints = copy.deepcopy(current)
        meta = endpoints["metadata"]
        annotations = dict(meta.get("annotations") or {})
        if trigger_time is not None:
            annotations[LAST_CHANGE_TRIGGER_TIME] = format_trigger_time(trigger_time)
        else:
            annotations.pop(LAST_CHANGE_TRIGGER_TIME, None)
        if truncate_endpoints(subsets):
            annotations[OVER_CAPACITY] = TRUNCATED
        else:
            annotations.pop(OVER_CAPACITY, None)
        labels = dict(labels)
        labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
        if is_service_ip_set(service):
            labels.pop(HEADLESS_LABEL, None)
        else:
            labels[HEADLESS_LABEL] = ""
        _set_or_drop(meta, "annotations", annotations)
        _set_or_drop(meta, "labels", labels)
        endpoints["subsets"] = subsets
        return endpoints

    async def _write(self, service: Object, endpoints: Object, create: bool) -> None:
        api = self.client.resource("", "v1", "endpoints").namespace(endpoints["metadata"]["namespace"])
        try:
            if create:
                await api.create(endpoints)
            else:
                await api.update(endpoints)
        except errors.StatusError as err:
            causes = (err.details or {}).get("causes") or ()
            if (
                create
                and err.code == 403
                and any(c.get("type") == NAMESPACE_TERMINATING_CAUSE for c in causes)
            ):
                return  # creates keep failing in a namespace being deleted: dropped
            ref = f"{service['metadata'].get('namespace', '')}/{service['metadata']['name']}"
            if create:
                self.recorder.event(
                    endpoints,
                    WARNING,
                    "FailedToCreateEndpoint",
                    f"Failed to create endpoint for service {ref}: {err.message}",
                )
            else:
                self.recorder.event(
                    endpoints,
                    WARNING,
                    "FailedToUpdateEndpoint",
                    f"Failed to update endpoint {ref}: {err.message}",
                )
            raise

    async def _delete_endpoints(self, namespace: str, name: str) -> None:
        try:
            await self.client.resource("", "v1", "endpoints").namespace(namespace).delete(name)
        except errors.StatusError as err:
            if err.code != 404:
                raise


def _set_or_drop(meta: Object, key: str, values: dict[str, str]) -> None:
    if values:
        meta[key] = values
    else:
        meta.pop(key, None)


def _address(service: Object, pod: Object) -> Object | None:
    """podToEndpointAddressForService: the pod's IP of the Service's (first) IP family."""
    spec = service.get("spec") or {}
    families = spec.get("ipFamilies") or []
    if families:
        want_ipv6 = families[0] == "IPv6"
    elif is_service_ip_set(service):
        want_ipv6 = is_ipv6(spec["clusterIP"])
    else:
        ips = pod_ips(pod)
        want_ipv6 = bool(ips) and is_ipv6(ips[0])
    ip = next((ip for ip in pod_ips(pod) if is_ipv6(ip) == want_ipv6), None)
    if ip is None:
        return None
    meta = pod["metadata"]
    address: Object = {"ip": ip}
    if should_set_hostname(pod, service):
        address["hostname"] = pod["spec"]["hostname"]
    address["nodeName"] = (pod.get("spec") or {}).get("nodeName") or ""
    address["targetRef"] = {
        "kind": "Pod",
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
    }
    return address


def _endpoint_port(service_port: Object, number: int) -> Object:
    port: Object = {"port": number, "protocol": service_port.get("protocol") or "TCP"}
    if service_port.get("name"):
        port["name"] = service_port["name"]
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


# ---- subsets ----


def _address_key(address: Object) -> tuple[str, str]:
    return address.get("ip", ""), (address.get("targetRef") or {}).get("uid", "")


def _port_key(port: Object) -> tuple[str, int, str, str]:
    return (
        port.get("name") or "",
        int(port.get("port") or 0),
        port.get("protocol") or "",
        port.get("appProtocol") or "",
    )


def repack_subsets(subsets: list[Object]) -> list[Object]:
    """endpoints.RepackSubsets: one subset per set of addresses offering the same ports; an address not
    ready on any port is not ready on that port. Sorted (addresses by IP then UID, ports and subsets by
    content; upstream orders ports and subsets by hash, an order no client relies on)."""
    addresses: dict[tuple[str, str], Object] = {}
    by_port: dict[tuple[str, int, str, str], dict[tuple[str, str], bool]] = {}
    port_of: dict[tuple[str, int, str, str], Object] = {}
    no_port = ("", -1, "", "")
    for subset in subsets:
        ports = subset.get("ports") or [None]
        for port in ports:
            pkey = _port_key(port) if port is not None else no_port
            if port is not None:
                port_of[pkey] = port
            ready_of = by_port.setdefault(pkey, {})
            for field_name, ready in (("addresses", True), ("notReadyAddresses", False)):
                for address in subset.get(field_name) or ():
                    akey = _address_key(address)
                    addresses.setdefault(akey, address)
                    if ready_of.get(akey, True):  # not ready trumps ready
                        ready_of[akey] = ready
    groups: dict[tuple[tuple[tuple[str, str], bool], ...], list[tuple[str, int, str, str]]] = {}
    for pkey, ready_of in by_port.items():
        group = groups.setdefault(tuple(sorted(ready_of.items())), [])
        if pkey != no_port:
            group.append(pkey)
    final = []
    for members, pkeys in groups.items():
        subset: Object = {}
        ready = [addresses[a] for a, ok in members if ok]
        not_ready = [addresses[a] for a, ok in members if not ok]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if pkeys:
            subset["ports"] = [port_of[p] for p in sorted(pkeys)]
        final.append(subset)
    final.sort(
        key=lambda s: (
            [_port_key(p) for p in s.get("ports") or ()],
            [_address_key(a) for a in s.get("addresses") or ()],
            [_address_key(a) for a in s.get("notReadyAddresses") or ()],
        )
    )
    return final


def _address_count(subsets: list[Object]) -> int:
    return sum(len(s.get("addresses") or ()) + len(s.get("notReadyAddresses") or ()) for s in subsets)


def truncate_endpoints(subsets: list[Object]) -> bool:
    """truncateEndpoints: keep at most MAX_CAPACITY addresses, ready ones first, spread over the subsets
    in proportion to their size (rounded up; the last subset gets what is left)."""
    total_ready = sum(len(s.get("addresses") or ()) for s in subsets)
    total_not_ready = sum(len(s.get("notReadyAddresses") or ()) for s in subsets)
    if total_ready + total_not_ready <= MAX_CAPACITY:
        return False
    truncate_ready = total_ready > MAX_CAPACITY
    budget = MAX_CAPACITY if truncate_ready else MAX_CAPACITY - total_ready
    total = total_ready if truncate_ready else total_not_ready
    can_be_added = budget
    field_name = "addresses" if truncate_ready else "notReadyAddresses"
    for i, subset in enumerate(subsets):
        in_subset = len(subset.get(field_name) or ())
        if i == len(subsets) - 1:
            to_add = can_be_added
        else:
            to_add = math.ceil(in_subset / total * budget) if total else 0
        to_add = max(0, min(to_add, can_be_added))
        kept = (subset.get(field_name) or [])[:to_add]
        if truncate_ready:
            subset.pop("notReadyAddresses", None)
        if kept:
            subset[field_name] = kept
        else:
            subset.pop(field_name, None)
        can_be_added -= len(kept)
    return True


def _up_to_date(current: Object, subsets: list[Object], service_labels: dict[str, str]) -> bool:
    """Nothing to write: the same subsets, the Service's labels (beside the controller's own labels),
    and the over-capacity annotation as it should be."""
    labels = dict(current["metadata"].get("labels") or {})
    labels.pop(HEADLESS_LABEL, None)
    if labels.get(MANAGED_BY_LABEL) != CONTROLLER_NAME:
        return False
    labels.pop(MANAGED_BY_LABEL, None)
    if labels != service_labels or (current.get("subsets") or []) != subsets:
        return False
    over = _address_count(subsets) > MAX_CAPACITY
    return not over and OVER_CAPACITY not in (current["metadata"].get("annotations") or {})
