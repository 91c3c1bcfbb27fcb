"""endpoints.RepackSubsets (pkg/api/v1/endpoints): subsets in their canonical layout, each address
once per port (ready winning over not ready), ports offered by the same addresses in one subset,
addresses sorted by IP and target UID. Kubernetes orders ports and subsets by a hash of their Go
values; here they keep the order they were first seen in."""

from __future__ import annotations

import json
from typing import Any

Object = dict[str, Any]
NO_PORT = "<none>"


def _address_key(address: Object) -> str:
    return json.dumps([address.get("ip", ""), ((address.get("targetRef") or {}).get("uid") or "")])


def _port_key(port: Object | None) -> str:
    return NO_PORT if port is None else json.dumps(port, sort_keys=True)


def _readiness(subsets: list[Object]) -> tuple[dict[str, Object], dict[str, Object], dict[str, dict[str, bool]]]:
    addresses: dict[str, Object] = {}
    ports: dict[str, Object] = {}
    ready_by_port: dict[str, dict[str, bool]] = {}
    for subset in subsets:
        for port in subset.get("ports") or [None]:
            pkey = _port_key(port)
            if port is not None:
                ports.setdefault(pkey, port)
            marks = ready_by_port.setdefault(pkey, {})
            for key, ready in (("addresses", True), ("notReadyAddresses", False)):
                for address in subset.get(key) or []:
                    akey = _address_key(address)
                    addresses.setdefault(akey, address)
                    marks[akey] = marks.get(akey, False) or ready
    return addresses, ports, ready_by_port


def _sorted(addresses: list[Object]) -> list[Object]:
    return sorted(addresses, key=lambda a: (a.get("ip", ""), (a.get("targetRef") or {}).get("uid") or ""))


def repack(subsets: list[Object]) -> list[Object]:
    addresses, ports, ready_by_port = _readiness(subsets)
    groups: dict[str, tuple[dict[str, bool], list[Object]]] = {}
    for pkey, marks in ready_by_port.items():
        group = groups.setdefault(json.dumps(sorted(marks.items())), (marks, []))
        if pkey != NO_PORT:
            group[1].append(ports[pkey])
    final = []
    for marks, group_ports in groups.values():
        subset: Object = {}
        ready = _sorted([addresses[k] for k, r in marks.items() if r])
        not_ready = _sorted([addresses[k] for k, r in marks.items() if not r])
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if group_ports:
            subset["ports"] = group_ports
        final.append(subset)
    return final
