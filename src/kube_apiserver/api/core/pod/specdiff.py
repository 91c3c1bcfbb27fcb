"""A readable diff of two PodSpecs (or another struct), in the shape of the go-cmp diff Kubernetes appends
to its "pod updates may not change fields" error (field names as in the Go struct)."""

from __future__ import annotations

import json
from typing import Any

Object = dict[str, Any]


def _go_name(key: str) -> str:
    special = {"dnsPolicy": "DNSPolicy", "dnsConfig": "DNSConfig", "os": "OS", "hostIPC": "HostIPC",
               "hostPID": "HostPID", "setHostnameAsFQDN": "SetHostnameAsFQDN"}
    return special.get(key, key[:1].upper() + key[1:])


def _value(value: Any) -> str:
    return "nil" if value is None else json.dumps(value, separators=(", ", ": "), sort_keys=True)


def spec_diff(old: Object, new: Object, type_name: str = "core.PodSpec") -> str:
    lines = [f"  {type_name}{{"]
    identical = 0
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            identical += 1
            continue
        if identical:
            lines.append(f"  \t... // {identical} identical fields")
            identical = 0
        if key in old:
            lines.append(f"- \t{_go_name(key)}: {_value(old[key])},")
        if key in new:
            lines.append(f"+ \t{_go_name(key)}: {_value(new[key])},")
    if identical:
        lines.append(f"  \t... // {identical} identical fields")
    lines.append("  }")
    return "\n".join(lines) + "\n"
