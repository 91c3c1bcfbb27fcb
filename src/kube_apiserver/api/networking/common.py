"""What the networking.k8s.io kinds share: the strategy base whose update validation is whole (k8s
ValidateUpdate calling the create checks itself, in its own order), field checks, object shaping."""

from __future__ import annotations

import ipaddress
from typing import Any

from ...apimachinery import field, labels, validation
from ...registry.context import Context
from ...registry.strategy import Strategy

Object = dict[str, Any]
GROUP = "networking.k8s.io"
UPDATING = "networking.k8s.io/updating"
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class NetworkingStrategy(Strategy):
    """validate() checks a new object; on update validate_update() alone answers, old object in hand."""

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        ctx.values[UPDATING] = True

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return [] if ctx.values.get(UPDATING) else self.validate_object(obj)

    def validate_object(self, obj: Object) -> field.ErrorList:
        """The create checks (k8s ValidateX); subclasses add theirs to validate_meta's."""
        return self.validate_meta(obj)

    def validate_meta(self, obj: Object) -> field.ErrorList:
        return validation.validate_object_meta(obj.get("metadata") or {}, self.info.namespaced,
                                               self.name_validator, field.Path("metadata"))

    def meta_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old)


def child(obj: Object, key: str) -> Object:
    """obj[key] as a dict, created when missing (a Go struct field is never absent)."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def items(obj: Any, key: str) -> list[Any]:
    """The dicts of a list field, skipping anything else."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def omit_empty(obj: Any, *keys: str) -> None:
    """omitempty: a zero value (empty string, list or map, 0, null) is never printed."""
    if isinstance(obj, dict):
        for key in keys:
            if key in obj and obj[key] in ("", 0, [], {}, None):
                del obj[key]


def subdomain_errors(value: str, path: field.Path) -> field.ErrorList:
    return [field.invalid(path, value, msg) for msg in validation.is_dns1123_subdomain(value)]


def segment_errors(value: str, path: field.Path) -> field.ErrorList:
    """content.IsPathSegmentName as field.Invalid errors."""
    return [field.invalid(path, value, msg) for msg in validation.is_valid_path_segment_name(value)]


def required_segment(value: str, path: field.Path) -> field.ErrorList:
    return [field.required(path, "")] if not value else segment_errors(value, path)


def parse_cidr_sloppy(value: str) -> Network | None:
    """netutils.ParseCIDRSloppy: the network (host bits masked), leading zeros tolerated."""
    address, sep, bits = value.partition("/")
    ip = validation.parse_ip_sloppy(address) if sep else None
    if ip is None or not (bits.isascii() and bits.isdigit()) or int(bits) > ip.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{ip}/{int(bits)}", strict=False)


def selector_text(selector: Any) -> str:
    """metav1.FormatLabelSelector: `<none>` for an empty selector, `<error>` for a broken one."""
    try:
        text = str(labels.selector_from_label_selector(selector if isinstance(selector, dict) else None))
    except ValueError:
        return "<error>"
    return text or "<none>"

