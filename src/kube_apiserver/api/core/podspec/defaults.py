"""PodSpec defaulting (pkg/apis/core/v1/defaults.go and the generated SetObjectDefaults_Pod /
SetObjectDefaults_PodTemplate): what every PodSpec gets, wherever it is embedded."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ....apimachinery import quantity
from .images import pull_policy_for
from .volume_defaults import default_volume

Object = dict[str, Any]
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
DEFAULT_TERMINATION_GRACE_PERIOD = 30
DEFAULT_SCHEDULER = "default-scheduler"


def _dict(parent: Object, key: str) -> Object | None:
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _items(parent: Object, key: str) -> list[Object]:
    value = parent.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def default_resource_list(resources: Any) -> None:
    """SetDefaults_ResourceList: values rounded up to milli precision and printed canonically.
    Raises quantity.QuantityError for a malformed value (a decoding error in Kubernetes)."""
    if not isinstance(resources, dict):
        return
    for name, raw in resources.items():
        value = quantity.parse(raw)
        resources[name] = str(quantity.Quantity(_round_up_milli(value.value), value.format))


def _round_up_milli(value: Fraction) -> Fraction:
    """Quantity.RoundUp(-3): away from zero."""
    scaled = value * 1000
    return Fraction(math.ceil(scaled) if scaled >= 0 else math.floor(scaled), 1000)


def default_resource_field_ref(ref: Object | None) -> None:
    """ResourceFieldSelector.divisor is a Quantity struct (not a pointer): an unset one encodes as "0"."""
    if ref is not None and ref.get("divisor") is None:
        ref["divisor"] = "0"


def default_http_get(action: Object | None) -> None:
    """SetDefaults_HTTPGetAction."""
    if action is None:
        return
    if not action.get("path"):
        action["path"] = "/"
    if not action.get("scheme"):
        action["scheme"] = "HTTP"


def default_probe(probe: Object | None) -> None:
    """SetDefaults_Probe, with its handler's defaults (a gRPC probe's service defaults to "")."""
    if probe is None:
        return
    for key, value in PROBE_DEFAULTS:
        if not probe.get(key):
            probe[key] = value
    default_http_get(_dict(probe, "httpGet"))
    grpc = _dict(probe, "grpc")
    if grpc is not None and grpc.get("service") is None:
        grpc["service"] = ""


def default_lifecycle(lifecycle: Object | None) -> None:
    for hook in ("postStart", "preStop"):
        handler = _dict(lifecycle or {}, hook)
        if handler is not None:
            default_http_get(_dict(handler, "httpGet"))


def default_field_ref(ref: Object | None) -> None:
    """SetDefaults_ObjectFieldSelector."""
    if ref is not None and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def default_container(container: Object) -> None:
    """SetDefaults_Container plus the generated defaults of its ports, env, resources, probes and hooks."""
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = pull_policy_for(container.get("image") or "")
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = TERMINATION_MESSAGE_PATH
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    for port in _items(container, "ports"):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in _items(container, "env"):
        default_field_ref(_dict(_dict(env, "valueFrom") or {}, "fieldRef"))
        default_resource_field_ref(_dict(_dict(env, "valueFrom") or {}, "resourceFieldRef"))
    resources = container.get("resources")
    if not isinstance(resources, dict):
        resources = container["resources"] = {}  # a struct, never omitted from the JSON
    default_resource_list(resources.get("limits"))
    default_resource_list(resources.get("requests"))
    for probe in PROBES:
        default_probe(_dict(container, probe))
    default_lifecycle(_dict(container, "lifecycle"))


def _inline_ephemeral_common(container: Object) -> None:
    """An ephemeral container's EphemeralContainerCommon is inlined in JSON (protobuf nests it)."""
    common = container.pop("ephemeralContainerCommon", None)
    if isinstance(common, dict):
        for key, value in common.items():
            container.setdefault(key, value)


def _service_account_alias(spec: Object) -> None:
    """v1's deprecated serviceAccount names the account when serviceAccountName does not; the v1
    conversion writes serviceAccountName to both."""
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]


def default_pod_spec(spec: Object) -> None:
    """SetDefaults_PodSpec and the defaults of everything a PodSpec holds (volumes, containers...)."""
    _service_account_alias(spec)
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    for volume in _items(spec, "volumes"):
        default_volume(volume)
    for key in CONTAINER_LISTS:
        for container in _items(spec, key):
            if key == "ephemeralContainers":
                _inline_ephemeral_common(container)
            default_container(container)
    default_resource_list(spec.get("overhead"))
    pod_resources = _dict(spec, "resources")
    if pod_resources is not None:
        default_resource_list(pod_resources.get("limits"))
        default_resource_list(pod_resources.get("requests"))


def default_pod(pod: Object) -> None:
    """SetObjectDefaults_Pod: the PodSpec defaults plus what only a Pod gets (SetDefaults_Pod):
    requests from limits, enableServiceLinks, host ports under hostNetwork."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        spec = pod["spec"] = {}
    for key in ("containers", "initContainers"):
        for container in _items(spec, key):
            _requests_from_limits(container)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for container in _items(spec, key):
                for port in _items(container, "ports"):
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort", 0)
    default_pod_spec(spec)


def _requests_from_limits(container: Object) -> None:
    resources = _dict(container, "resources")
    limits = _dict(resources or {}, "limits")
    if resources is None or limits is None:
        return
    requests = resources.get("requests")
    if not isinstance(requests, dict):
        requests = resources["requests"] = {}
    for name, value in limits.items():
        requests.setdefault(name, value)
