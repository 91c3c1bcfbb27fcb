"""resource.k8s.io/v1 defaulting (pkg/apis/resource/v1/defaults.go and the +default markers), and
quantities as decoding leaves them: canonical, or a 400 when malformed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...apimachinery import errors, quantity
from ...apimachinery.meta import now_rfc3339
from .common import as_dict, as_list

Object = dict[str, Any]

def default_request(request: Object) -> None:
    """SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest: one device, exactly."""
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    for toleration in map(as_dict, as_list(request.get("tolerations"))):
        if not toleration.get("operator"):
            toleration["operator"] = "Equal"  # +default="Equal"

def requests_of(claim_spec: Object) -> Iterator[Object]:
    """Every exact request and subrequest of a claim spec."""
    for request in map(as_dict, as_list(as_dict(claim_spec.get("devices")).get("requests"))):
        if isinstance(request.get("exactly"), dict):
            yield request["exactly"]
        yield from (s for s in as_list(request.get("firstAvailable")) if isinstance(s, dict))

def default_claim_spec(spec: Object) -> None:
    for request in requests_of(spec):
        default_request(request)

def default_claim(claim: Object, kind: str) -> None:
    spec = claim.get("spec")
    if isinstance(spec, dict):
        default_claim_spec(spec)
        canonical_claim_quantities(spec, kind)
    status = claim.get("status")
    if isinstance(status, dict):
        default_status(status, kind)

def default_status(status: Object, kind: str) -> None:
    results = as_list(as_dict(as_dict(status.get("allocation")).get("devices")).get("results"))
    for result in map(as_dict, results):
        for toleration in map(as_dict, as_list(result.get("tolerations"))):
            if not toleration.get("operator"):
                toleration["operator"] = "Equal"
        canonical_map(result, "consumedCapacity", kind)

def default_template(template: Object, kind: str) -> None:
    spec = as_dict(template.get("spec"))
    if isinstance(spec.get("spec"), dict):
        default_claim_spec(spec["spec"])
        canonical_claim_quantities(spec["spec"], kind)

def default_slice(obj: Object, kind: str) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    pool = spec.get("pool")
    if isinstance(pool, dict):
        pool.setdefault("generation", 0)  # not omitempty: Go always prints it
    for device in map(as_dict, as_list(spec.get("devices"))):
        default_device(device, kind)
    for counter_set in map(as_dict, as_list(spec.get("sharedCounters"))):
        canonical_counters(counter_set, kind)

def default_device(device: Object, kind: str) -> None:
    for taint in map(as_dict, as_list(device.get("taints"))):
        if not taint.get("timeAdded"):
            taint["timeAdded"] = now_rfc3339()  # SetDefaults_DeviceTaint: now, to the second
    for capacity in map(as_dict, as_dict(device.get("capacity")).values()):
        canonical_quantity(capacity, "value", kind)
        policy = as_dict(capacity.get("requestPolicy"))
        canonical_quantity(policy, "default", kind)
        if isinstance(policy.get("validValues"), list):
            policy["validValues"] = [_canonical(v, kind) for v in policy["validValues"]]
        for key in ("min", "max", "step"):
            canonical_quantity(as_dict(policy.get("validRange")), key, kind)
    for consumption in map(as_dict, as_list(device.get("consumesCounters"))):
        canonical_counters(consumption, kind)

# ---- quantities ----

def _canonical(value: Any, kind: str) -> str:
    try:
        return str(quantity.parse(value))
    except quantity.QuantityError as err:
        raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {err}') from None

def canonical_quantity(container: Object, key: str, kind: str) -> None:
    if container.get(key) is not None:
        container[key] = _canonical(container[key], kind)

def canonical_map(container: Object, key: str, kind: str) -> None:
    if isinstance(container.get(key), dict):
        container[key] = {name: _canonical(value, kind) for name, value in container[key].items()}

def canonical_counters(owner: Object, kind: str) -> None:
    for counter in map(as_dict, as_dict(owner.get("counters")).values()):
        canonical_quantity(counter, "value", kind)

def canonical_claim_quantities(spec: Object, kind: str) -> None:
    for request in requests_of(spec):
        canonical_map(as_dict(request.get("capacity")), "requests", kind)
