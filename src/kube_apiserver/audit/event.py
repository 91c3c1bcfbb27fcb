"""One request's audit context (pkg/audit/context.go, request.go): the audit.k8s.io/v1 Event it builds up
as the request goes, sent to the sink at each stage the policy does not omit."""

from __future__ import annotations

import ipaddress
import logging
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from ..apimachinery import errors, serializer
from . import (
    GROUP_VERSION,
    LEVEL_REQUEST,
    LEVEL_REQUEST_RESPONSE,
    LEVELS,
    STAGE_REQUEST_RECEIVED,
)
from .policy import RequestAuditConfig

log = logging.getLogger("kube_apiserver.audit")

CONTEXT_KEY = "audit"  # where a request's AuditContext is kept (Request.values), when it is audited
MAX_USER_AGENT_LENGTH = 1024
USER_AGENT_TRUNCATE_SUFFIX = "...TRUNCATED"
# Request bodies decoded for the event: the patch types and the object types kubectl and clients send.
_YAML_TYPES = ("application/yaml", "application/apply-patch+yaml", "application/x-yaml", "text/yaml")
PROTOBUF = "application/vnd.kubernetes.protobuf"


class Sink(Protocol):
    def process_event(self, event: dict[str, Any]) -> bool: ...


_second: tuple[int, str] = (-1, "")  # the last whole second formatted: events come many per second


def micro_time(ts: float) -> str:
    """metav1.MicroTime as JSON: RFC 3339, UTC, six fraction digits."""
    global _second
    whole, cached = int(ts), _second  # one read: another thread may replace it
    if cached[0] != whole:
        cached = _second = (whole, datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{cached[1]}.{int((ts - whole) * 1e6):06d}Z"


def source_ips(headers: dict[str, str], remote_addr: str) -> list[str]:
    """utilnet.SourceIPs: the X-Forwarded-For chain, X-Real-Ip if new, then the peer unless it is the last
    (the peer's address comes from the socket, already in canonical form)."""
    ips: list[str] = []
    forwarded, real = headers.get("x-forwarded-for"), headers.get("x-real-ip")
    if forwarded:
        ips = [ip for ip in (_ip(part.strip()) for part in forwarded.split(",")) if ip]
    if real:
        ip = _ip(real)
        if ip and ip not in ips:
            ips.append(ip)
    if remote_addr and (not ips or ips[-1] != remote_addr):
        ips.append(remote_addr)
    return ips


def _ip(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value)) if value else ""
    except ValueError:
        return ""


def user_json(user: Any) -> dict[str, Any]:
    """authentication/v1 UserInfo; extra's keys sorted as Go writes a map."""
    out = user.to_json()
    if "extra" in out:
        out["extra"] = dict(sorted(out["extra"].items()))
    return out


def without_managed_fields(obj: Any) -> Any:
    """copyWithoutManagedFields: an object's, a list's items' and a table's rows' managedFields dropped
    (the object is a fresh decode, so it is changed in place)."""
    if not isinstance(obj, dict):
        return obj
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    items = obj.get("items")
    for item in items if isinstance(items, list) else ():
        without_managed_fields(item)
    if obj.get("kind") == "Table":
        for row in obj.get("rows") or ():
            if isinstance(row, dict):
                without_managed_fields(row.get("object"))
    return obj


def decode_body(body: bytes, content_type: str) -> Any:
    """The object a request or response carried (JSON, a patch, YAML or protobuf); None if it can't be."""
    media = content_type.split(";", 1)[0].strip()
    try:
        if media.endswith("json") or not media:
            return orjson.loads(body)
        if media in _YAML_TYPES:
            return serializer.decode_yaml(body)  # bounded aliasing: a bomb is not expanded into the log
        if media == PROTOBUF:
            from ..apimachinery import protobuf
            return protobuf.decode(body, [])
    except (ValueError, errors.StatusError):  # orjson's error is a ValueError
        pass
    return None


class AuditContext:
    """The Event of one audited request; stage and stageTimestamp are set as each stage is sent."""

    __slots__ = ("config", "sink", "audit_id", "received", "request_uri", "verb", "user", "impersonated_user",
                 "source_ips", "user_agent", "object_ref", "response_status", "request_object",
                 "response_object", "annotations")

    def __init__(self, config: RequestAuditConfig, sink: Sink, audit_id: str, received: float):
        self.config = config
        self.sink = sink
        self.audit_id = audit_id
        self.received = received
        self.request_uri = ""
        self.verb = ""
        self.user: dict[str, Any] = {}
        self.impersonated_user: dict[str, Any] | None = None
        self.source_ips: list[str] = []
        self.user_agent = ""
        self.object_ref: dict[str, str] | None = None
        self.response_status: dict[str, Any] | None = None
        self.request_object: Any = None
        self.response_object: Any = None
        self.annotations: dict[str, str] = {}

    @property
    def level(self) -> str:
        return self.config.level

    def at_least(self, level: str) -> bool:
        return LEVELS.index(self.config.level) >= LEVELS.index(level)

    def log_request_metadata(self, req: Any) -> None:
        """LogRequestMetadata: URI, verb, user, source IPs, user agent, and the object reference."""
        info = req.info
        qs = req.query_string.decode("latin-1")
        self.request_uri = req.path + ("?" + qs if qs else "")
        self.verb = info.verb
        agent = req.headers.get("user-agent", "")
        self.user_agent = agent if len(agent) <= MAX_USER_AGENT_LENGTH else (
            agent[:MAX_USER_AGENT_LENGTH] + USER_AGENT_TRUNCATE_SUFFIX)
        self.source_ips = source_ips(req.headers, req.remote_addr)
        if req.user is not None:
            self.user = user_json(req.user)
        if info.is_resource_request:
            # ObjectReference's field order; the empty ones are left out when written.
            self.object_ref = {"resource": info.resource, "namespace": info.namespace, "name": info.name,
                               "uid": "", "apiGroup": info.api_group, "apiVersion": info.api_version,
                               "resourceVersion": "", "subresource": info.subresource}

    def log_request_object(self, body: bytes | None, content_type: str) -> None:
        """LogRequestObject / LogRequestPatch: the decoded body at Request level and above; a create's or
        update's object names what objectRef did not (name, uid, resourceVersion)."""
        if not body or self.verb not in ("create", "update", "patch", "delete", "deletecollection"):
            return
        obj = decode_body(body, content_type)
        if obj is None:
            return
        if self.config.omit_managed_fields:
            obj = without_managed_fields(obj)
        meta = obj.get("metadata") if isinstance(obj, dict) and self.verb in ("create", "update") else None
        if isinstance(meta, dict) and self.object_ref is not None:
            ref = self.object_ref
            ref["namespace"] = ref["namespace"] or str(meta.get("namespace") or "")
            ref["name"] = ref["name"] or str(meta.get("name") or "")
            ref["uid"] = str(meta.get("uid") or "")
            ref["resourceVersion"] = str(meta.get("resourceVersion") or "")
        if self.at_least(LEVEL_REQUEST):
            self.request_object = obj

    def log_response_status(self, status: dict[str, Any]) -> None:
        """LogResponseObject for a metav1.Status: its fields in responseStatus, the whole of it as the
        responseObject at RequestResponse."""
        self.response_status = {"metadata": {}, **{k: status[k] for k in ("status", "message", "reason", "details")
                                                   if status.get(k)}, "code": status.get("code", 0)}
        if self.at_least(LEVEL_REQUEST_RESPONSE):
            self.response_object = status

    def log_response_object(self, obj: Any) -> None:
        if self.config.omit_managed_fields:
            obj = without_managed_fields(obj)
        self.response_object = obj

    def set_code(self, code: int) -> None:
        if self.response_status is None:
            self.response_status = {"metadata": {}}
        self.response_status["code"] = code

    def add_annotation(self, key: str, value: str) -> None:
        """The first value set for a key stays (a different later one is logged and dropped)."""
        old = self.annotations.setdefault(key, value)
        if old != value:
            log.warning("Failed to set annotations[%r] to %r for audit:%r, it has already been set to %r",
                        key, value, self.audit_id, old)

    def process(self, stage: str, now: float) -> bool:
        """ProcessEventStage: the Event as of this stage, unless the policy omits the stage."""
        if stage in self.config.omit_stages:
            return True
        return self.sink.process_event(self.event(stage, self.received if stage == STAGE_REQUEST_RECEIVED else now))

    def event(self, stage: str, stage_ts: float) -> dict[str, Any]:
        """The Event in audit.k8s.io/v1's field order, empty optional fields left out."""
        ev: dict[str, Any] = {"kind": "Event", "apiVersion": GROUP_VERSION, "level": self.config.level,
                              "auditID": self.audit_id, "stage": stage, "requestURI": self.request_uri,
                              "verb": self.verb, "user": self.user}
        if self.impersonated_user is not None:
            ev["impersonatedUser"] = self.impersonated_user
        if self.source_ips:
            ev["sourceIPs"] = self.source_ips
        if self.user_agent:
            ev["userAgent"] = self.user_agent
        if self.object_ref is not None:
            ev["objectRef"] = {k: v for k, v in self.object_ref.items() if v}
        if self.response_status is not None:
            ev["responseStatus"] = self.response_status
        if self.request_object is not None:
            ev["requestObject"] = self.request_object
        if self.response_object is not None:
            ev["responseObject"] = self.response_object
        ev["requestReceivedTimestamp"] = micro_time(self.received)
        ev["stageTimestamp"] = micro_time(stage_ts)
        if self.annotations:
            ev["annotations"] = dict(sorted(self.annotations.items()))
        return ev


def add_annotation(values: dict[str, Any], key: str, value: str) -> None:
    """audit.AddAuditAnnotation for a request's values: a no-op (one dict lookup) when it is not audited."""
    ac = values.get(CONTEXT_KEY)
    if ac is not None:
        ac.add_annotation(key, value)

