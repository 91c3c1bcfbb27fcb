"""The EndpointSlice reconciler (staging endpointslice/reconciler.go): from a Service, its pods and the
slices it has, the slices to create, update and delete, with the least churn: endpoints stay in the
slice they are in; a slice that changes anyway is filled up first; what is left goes into the unchanged
slice it fits best, else into new slices; a create takes the place of a delete (an update instead)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery.validation import name_is_dns_subdomain
from .config import DEFAULT_MAX_ENDPOINTS_PER_SLICE
from .endpointutil import (
    HEADLESS_LABEL,
    PortNotFoundError,
    find_port,
    is_ipv6,
    is_pod_serving,
    is_service_ip_set,
    pod_ips,
    should_pod_be_in_endpoints,
    should_set_hostname,
)

Object = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
ZONE_LABEL = "topology.kubernetes.io/zone"
RESERVED_LABELS = frozenset({SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL})
PortMapKey = tuple[tuple[str, int, str, str], ...]
EndpointKey = tuple[tuple[str, ...], str, str, str]


def port_map_key(ports: list[Object]) -> PortMapKey:
    """NewPortMapKey: the ports as a set (their order does not matter)."""
    return tuple(
        sorted(
            (
                p.get("name") or "",
                int(p.get("port") or 0),
                p.get("protocol") or "",
                p.get("appProtocol") or "",
            )
            for p in ports
        )
    )


def endpoint_key(endpoint: Object) -> EndpointKey:
    """What identifies an endpoint across syncs (hashEndpoint): its addresses, hostname and pod."""
    ref = endpoint.get("targetRef") or {}
    return (
        tuple(sorted(endpoint.get("addresses") or ())),
        endpoint.get("hostname") or "",
        ref.get("namespace") or "",
        ref.get("name") or "",
    )


def owned_by(endpoint_slice: Object, service: Object) -> bool:
    uid = service["metadata"].get("uid")
    return any(
        ref.get("uid") == uid and ref.get("kind") == "Service" and ref.get("apiVersion") == "v1"
        for ref in endpoint_slice["metadata"].get("ownerReferences") or ()
    )


def address_types(service: Object) -> list[str]:
    """getAddressTypesForService: one address type per IP family of the Service."""
    spec = service.get("spec") or {}
    families = [f for f in spec.get("ipFamilies") or () if f in ("IPv4", "IPv6")]
    if families:
        return list(dict.fromkeys(families))
    if is_service_ip_set(service):
        return ["IPv6" if is_ipv6(spec["clusterIP"]) else "IPv4"]
    return ["IPv4"]


def slice_prefix(service_name: str) -> str:
    """getEndpointSlicePrefix: `<service>-`, or the name alone when that is not a valid generateName."""
    prefix = f"{service_name}-"
    return prefix if not name_is_dns_subdomain(prefix, True) else service_name


def slice_labels(
    endpoint_slice: Object, service: Object, controller_name: str
) -> tuple[dict[str, str], bool]:
    """setEndpointSliceLabels: the Service's labels (not the reserved ones) and the controller's; whether
    the Service's labels differ from the slice's."""
    current = {
        k: v for k, v in (endpoint_slice["metadata"].get("labels") or {}).items() if k not in RESERVED_LABELS
    }
    labels = {k: v for k, v in (service["metadata"].get("labels") or {}).items() if k not in RESERVED_LABELS}
    updated = current != labels
    if not is_service_ip_set(service):
        labels[HEADLESS_LABEL] = ""
    labels[SERVICE_NAME_LABEL] = service["metadata"]["name"]
    labels[MANAGED_BY_LABEL] = controller_name
    return labels, updated


def new_endpoint_slice(
    service: Object, ports: list[Object], address_type: str, controller_name: str
) -> Object:
    meta = service["metadata"]
    endpoint_slice: Object = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "generateName": slice_prefix(meta["name"]),
            "namespace": meta.get("namespace", ""),
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "addressType": address_type,
        "endpoints": [],
        "ports": ports,
    }
    endpoint_slice["metadata"]["labels"], _ = slice_labels(endpoint_slice, service, controller_name)
    return endpoint_slice


def endpoint_ports(service: Object, pod: Object) -> list[Object]:
    """getEndpointPorts: each service port resolved on the pod (those that do not resolve left out)."""
    spec = service.get("spec") or {}
    ports: list[Object] = []
    for service_port in spec.get("ports") or ():
        try:
            number = find_port(pod, service_port)
        except PortNotFoundError:
            continue
        port: Object = {
            "name": service_port.get("name") or "",
            "port": number,
            "protocol": service_port.get("protocol") or "TCP",
        }
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        ports.append(port)
    return ports


def pod_to_endpoint(pod: Object, node: Object | None, service: Object, address_type: str) -> Object:
    """podToEndpoint: serving is the pod's readiness; ready is serving and not terminating, or always
    with publishNotReadyAddresses."""
    serving = is_pod_serving(pod)
    terminating = bool(pod["metadata"].get("deletionTimestamp"))
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or (serving and not terminating)
    want_ipv6 = address_type == "IPv6"
    meta = pod["metadata"]
    endpoint: Object = {
        "addresses": [ip for ip in pod_ips(pod) if is_ipv6(ip) == want_ipv6],
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
    }
    if should_set_hostname(pod, service):
        endpoint["hostname"] = pod["spec"]["hostname"]
    endpoint["targetRef"] = {
        "kind": "Pod",
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
    }
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        endpoint["nodeName"] = node_name
    zone = ((node or {}).get("metadata", {}).get("labels") or {}).get(ZONE_LABEL)
    if zone:
        endpoint["zone"] = zone
    return endpoint


@dataclass
class Changes:
    create: list[Object] = field(default_factory=list)
    update: list[Object] = field(default_factory=list)
    delete: list[Object] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # pods skipped: the sync is retried later


@dataclass
class Reconciler:
    controller_name: str
    max_endpoints_per_slice: int = DEFAULT_MAX_ENDPOINTS_PER_SLICE
    node_of: Callable[[str], Object | None] = lambda name: None

    def reconcile(self, service: Object, pods: list[Object], existing: list[Object]) -> Changes:
        """Reconcile: the changes over every address type of the Service; slices of other address types go."""
        changes = Changes()
        types = address_types(service)
        by_type: dict[str, list[Object]] = {t: [] for t in types}
        for endpoint_slice in existing:
            if endpoint_slice.get("addressType") in by_type:
                by_type[endpoint_slice["addressType"]].append(endpoint_slice)
            elif owned_by(endpoint_slice, service):
                changes.delete.append(endpoint_slice)
        for address_type in types:
            self._reconcile_address_type(service, pods, by_type[address_type], address_type, changes)
        self._creates_as_updates(service, changes)
        _reconcile_hints(service, existing, changes)
        return changes

    def _reconcile_address_type(
        self, service: Object, pods: list[Object], existing: list[Object], address_type: str, changes: Changes
    ) -> None:
        start_create, start_delete = len(changes.create), len(changes.delete)
        existing_by_ports: dict[PortMapKey, list[Object]] = {}
        for endpoint_slice in existing:
            if owned_by(endpoint_slice, service):
                existing_by_ports.setdefault(port_map_key(endpoint_slice.get("ports") or []), []).append(
                    endpoint_slice
                )
            else:
                changes.delete.append(endpoint_slice)
        desired_ports: dict[PortMapKey, list[Object]] = {}
        desired: dict[PortMapKey, dict[EndpointKey, Object]] = {}
        publish_not_ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        for pod in pods:
            if not should_pod_be_in_endpoints(pod, True):
                continue
            ports = endpoint_ports(service, pod)
            key = port_map_key(ports)
            endpoints = desired.setdefault(key, {})
            desired_ports.setdefault(key, ports)
            node_name = (pod.get("spec") or {}).get("nodeName") or ""
            node = self.node_of(node_name) if node_name else None
            if node is None and not publish_not_ready:
                # A pod on a node that does not exist is left out and the Service synced again later.
                changes.errors.append(
                    f"skipping Pod {pod['metadata'].get('name')} for Service "
                    f"{service['metadata'].get('namespace')}/{service['metadata']['name']}: "
                    f'node "{node_name}" not found'
                )
                continue
            endpoint = pod_to_endpoint(pod, node, service, address_type)
            if endpoint["addresses"]:
                endpoints[endpoint_key(endpoint)] = endpoint
        for key, endpoints in desired.items():
            self._reconcile_port_mapping(
                service, existing_by_ports.get(key, []), endpoints, desired_ports[key], address_type, changes
            )
        for key, slices in existing_by_ports.items():
            if key not in desired:
                changes.delete.extend(slices)
        deleted_here = changes.delete[start_delete:]
        if len(existing) == len(deleted_here) and len(changes.create) == start_create:
            placeholder = new_endpoint_slice(service, [], address_type, self.controller_name)
            if len(deleted_here) == 1 and _same_placeholder(deleted_here[0], placeholder):
                del changes.delete[start_delete:]  # the placeholder is already there
            else:
                changes.create.append(placeholder)

    def _reconcile_port_mapping(
        self,
        service: Object,
        existing: list[Object],
        desired: dict[EndpointKey, Object],
        ports: list[Object],
        address_type: str,
        changes: Changes,
    ) -> None:
        """reconcileByPortMapping, for the slices of one set of ports."""
        by_name: dict[str, Object] = {}
        unchanged: list[str] = []
        to_update: list[str] = []
        to_delete: list[str] = []
        # 1. Keep each wanted endpoint where it is, updated; drop the unwanted ones.
        for endpoint_slice in existing:
            name = endpoint_slice["metadata"]["name"]
            by_name[name] = endpoint_slice
            kept, updated = [], False
            for endpoint in endpoint_slice.get("endpoints") or ():
                wanted = desired.pop(endpoint_key(endpoint), None)
                if wanted is not None:
                    kept.append(wanted)
                    updated = updated or not _equal_beyond_hints(wanted, endpoint)
            labels, labels_changed = slice_labels(endpoint_slice, service, self.controller_name)
            if updated or len(kept) != len(endpoint_slice.get("endpoints") or ()):
                if not kept:
                    to_delete.append(name)
                    continue
                by_name[name] = {**copy.deepcopy(endpoint_slice), "endpoints": kept}
                by_name[name]["metadata"]["labels"] = labels
                to_update.append(name)
            elif labels_changed:
                by_name[name] = copy.deepcopy(endpoint_slice)
                by_name[name]["metadata"]["labels"] = labels
                to_update.append(name)
            else:
                unchanged.append(name)
        remaining = list(desired.values())
        limit = self.max_endpoints_per_slice
        # 2. Fill the slices being updated anyway, fullest first.
        if remaining and to_update:
            for name in sorted(to_update, key=lambda n: -len(by_name[n]["endpoints"])):
                room = limit - len(by_name[name]["endpoints"])
                if room > 0:
                    by_name[name]["endpoints"].extend(remaining[:room])
                    remaining = remaining[room:]
        # 3. The rest into the unchanged slice it fits best, else into new slices.
        while remaining:
            target = None
            if len(remaining) < limit and unchanged:
                target = _slice_to_fill([by_name[n] for n in unchanged], len(remaining), limit)
            if target is None:
                target = new_endpoint_slice(service, ports, address_type, self.controller_name)
            else:
                target = copy.deepcopy(target)
                by_name[target["metadata"]["name"]] = target
            room = limit - len(target["endpoints"])
            target["endpoints"].extend(remaining[:room])
            remaining = remaining[room:]
            name = target["metadata"].get("name")
            if name:
                to_update.append(name)
                unchanged.remove(name)
            else:
                changes.create.append(target)
        changes.update.extend(by_name[n] for n in to_update)
        changes.delete.extend(by_name[n] for n in to_delete)

    @staticmethod
    def _creates_as_updates(service: Object, changes: Changes) -> None:
        """finalize: a slice to create takes the name of one of the same address type to delete."""
        i = 0
        while i < len(changes.delete) and changes.create:
            doomed, new = changes.delete[i], changes.create[-1]
            if doomed.get("addressType") == new.get("addressType") and owned_by(doomed, service):
                new["metadata"]["name"] = doomed["metadata"]["name"]
                new["metadata"].pop("generateName", None)
                new["metadata"]["resourceVersion"] = doomed["metadata"].get("resourceVersion")
                changes.create.pop()
                changes.update.append(new)
                changes.delete.pop(i)
            else:
                i += 1


# ---- trafficDistribution hints (staging endpointslice/trafficdist) ----


def _ready(endpoint: Object) -> bool:
    return bool((endpoint.get("conditions") or {}).get("ready"))


def _wanted_hints(endpoint: Object, distribution: str | None) -> Object | None:
    """The hints a ready endpoint gets: its zone with PreferClose/PreferSameZone; its zone and node with
    PreferSameNode (the zone for consumers that only know zone hints); none otherwise."""
    if distribution not in ("PreferClose", "PreferSameZone", "PreferSameNode"):
        return None
    hints: Object = {}
    if endpoint.get("zone"):
        hints["forZones"] = [{"name": endpoint["zone"]}]
    if distribution == "PreferSameNode" and endpoint.get("nodeName"):
        hints["forNodes"] = [{"name": endpoint["nodeName"]}]
    return hints or None


def _needs_hints_update(endpoint_slice: Object, distribution: str | None) -> bool:
    for endpoint in endpoint_slice.get("endpoints") or ():
        if distribution is None or _ready(endpoint):
            if endpoint.get("hints") != _wanted_hints(endpoint, distribution):
                return True
    return False


def _set_hints(endpoint_slice: Object, distribution: str | None) -> None:
    """The ready endpoints' hints as wanted (without a distribution, every endpoint's removed)."""
    for endpoint in endpoint_slice.get("endpoints") or ():
        if distribution is not None and not _ready(endpoint):
            continue
        hints = _wanted_hints(endpoint, distribution)
        if hints is None:
            endpoint.pop("hints", None)
        else:
            endpoint["hints"] = hints


def _reconcile_hints(service: Object, existing: list[Object], changes: Changes) -> None:
    """ReconcileHints: hints on the slices written anyway; an unchanged slice with wrong hints is
    rewritten too. (The topology-mode annotation's allocation by zone CPU is not implemented: a Service
    with it is left to its spec.trafficDistribution like any other.)"""
    distribution = (service.get("spec") or {}).get("trafficDistribution")
    if distribution not in ("PreferClose", "PreferSameZone", "PreferSameNode"):
        distribution = None
    touched = {s["metadata"].get("name") for s in changes.update + changes.delete}
    for endpoint_slice in existing:
        name = endpoint_slice["metadata"].get("name")
        if name in touched or not owned_by(endpoint_slice, service):
            continue
        if _needs_hints_update(endpoint_slice, distribution):
            changes.update.append(copy.deepcopy(endpoint_slice))
    for endpoint_slice in changes.create + changes.update:
        _set_hints(endpoint_slice, distribution)


def _equal_beyond_hints(a: Object, b: Object) -> bool:
    """EndpointsEqualBeyondHash: hints are the hints reconciler's business, not a change of the endpoint."""
    return {k: v for k, v in a.items() if k != "hints"} == {k: v for k, v in b.items() if k != "hints"}


def _slice_to_fill(slices: list[Object], count: int, limit: int) -> Object | None:
    """getSliceToFill: the slice that `count` more endpoints fill the closest to the limit."""
    closest_diff, closest = limit, None
    for endpoint_slice in slices:
        diff = limit - (count + len(endpoint_slice.get("endpoints") or ()))
        if 0 <= diff < closest_diff:
            closest_diff, closest = diff, endpoint_slice
            if diff == 0:
                break
    return closest


def _same_placeholder(existing: Object, placeholder: Object) -> bool:
    """placeholderSliceCompare: the same slice but for its name and the fields the server sets."""
    meta, want = existing["metadata"], placeholder["metadata"]
    return (
        existing.get("addressType") == placeholder["addressType"]
        and not existing.get("endpoints")
        and not existing.get("ports")
        and (meta.get("labels") or {}) == want["labels"]
        and [(r.get("uid"), r.get("kind")) for r in meta.get("ownerReferences") or ()]
        == [(r["uid"], r["kind"]) for r in want["ownerReferences"]]
    )
