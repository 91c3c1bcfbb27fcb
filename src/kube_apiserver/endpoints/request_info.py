"""RequestInfo: what a request is about, parsed once from its path (k8s RequestInfoFactory)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..apimachinery import fields

API_PREFIXES = frozenset({"api", "apis"})
GROUPLESS_API_PREFIXES = frozenset({"api"})
SPECIAL_VERBS = frozenset({"proxy", "watch"})
SPECIAL_VERBS_NO_SUBRESOURCES = frozenset({"proxy"})
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete"}


@dataclass(slots=True)
class RequestInfo:
    is_resource_request: bool = False
    path: str = ""
    verb: str = ""
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)


def _valid_path_segment(name: str) -> bool:
    return name not in (".", "..") and "/" not in name and "%" not in name


def _is_watch(query: dict[str, list[str]]) -> bool:
    values = query.get("watch")
    return bool(values) and values[0].lower() not in ("false", "0")


def new_request_info(method: str, path: str, query: dict[str, list[str]]) -> RequestInfo:
    info = RequestInfo(path=path, verb=method.lower())
    trimmed = path.strip("/")
    parts = trimmed.split("/") if trimmed else []
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return info
    info.api_prefix, parts = parts[0], parts[1:]
    if info.api_prefix not in GROUPLESS_API_PREFIXES:
        if len(parts) < 3:
            return info
        info.api_group, parts = parts[0], parts[1:]
    info.is_resource_request = True
    info.api_version, parts = parts[0], parts[1:]
    if parts and parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            info.is_resource_request = False
            return info
        info.verb, parts = parts[0], parts[1:]
    else:
        info.verb = METHOD_VERBS.get(method, method.lower())
    if parts and parts[0] == "namespaces":
        if len(parts) > 1:
            info.namespace = parts[1]
            if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
                parts = parts[2:]
    info.parts = parts
    if len(parts) >= 3 and info.verb not in SPECIAL_VERBS_NO_SUBRESOURCES:
        info.subresource = parts[2]
    if len(parts) >= 2:
        info.name = parts[1]
    if len(parts) >= 1:
        info.resource = parts[0]
    if not info.name and info.verb == "get":
        info.verb = "watch" if _is_watch(query) else "list"
        selector = query.get("fieldSelector")
        if selector:
            name = _exact_name(selector[0])
            if name and _valid_path_segment(name):
                info.name = name
    if not info.name and info.verb == "delete":
        info.verb = "deletecollection"
    return info


def _exact_name(selector: str) -> str:
    try:
        parsed = fields.parse_field_selector(selector)
    except ValueError:
        return ""
    for fld, op, value in parsed.requirements():
        if fld == "metadata.name" and op in ("=", "=="):
            return value
    return ""
