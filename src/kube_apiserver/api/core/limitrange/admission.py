"""The LimitRanger admission plugin (plugin/pkg/admission/limitranger): containers of a new pod get the
default requests and limits of their namespace's LimitRanges (mutating), and pods and claims outside a
LimitRange's min, max or maxLimitRequestRatio are refused (validating)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....admission.interfaces import CREATE, UPDATE, Attributes, forbidden
from ....admission.lister import NamespacedLister
from ....apimachinery.quantity import Quantity
from ..podspec.requests import container_aggregate
from ..podspec.resources import parsed
from .validation import MAX_MILLI_VALUE, go_float

Object = dict[str, Any]
ResourceList = dict[str, Quantity]
ANNOTATION = "kubernetes.io/limit-ranger"
LimitFunc = Callable[[Object, str, Object], list[str]]


def _items(limit_range: Object, limit_type: str) -> list[Object]:
    return [i for i in (limit_range.get("spec") or {}).get("limits") or [] if i.get("type") == limit_type]


def _merge(container: Object, defaults: dict[str, ResourceList], kind: str) -> list[str]:
    """mergeContainerResources: the defaults a container lacks, and what was set, for the annotation."""
    resources = container.setdefault("resources", {})
    notes: list[str] = []
    for key, word in (("requests", "request"), ("limits", "limit")):
        current = dict(resources.get(key) or {})
        added = sorted(name for name in defaults[key] if name not in current)
        for name in added:
            current[name] = str(defaults[key][name])
        if current:
            resources[key] = dict(sorted(current.items())) if added else current
        if added:
            notes.append(f"{', '.join(added)} {word} for {kind} {container.get('name', '')}")
    return notes


def mutate_pod(limit_range: Object, pod: Object) -> None:
    """PodMutateLimitFunc: the Container limits' defaults merged into every (init) container."""
    defaults: dict[str, ResourceList] = {"requests": {}, "limits": {}}
    for item in _items(limit_range, "Container"):
        defaults["requests"].update(parsed(item.get("defaultRequest")))
        defaults["limits"].update(parsed(item.get("default")))
    spec = pod.get("spec") or {}
    notes = [n for c in spec.get("containers") or [] for n in _merge(c, defaults, "container")]
    notes += [n for c in spec.get("initContainers") or [] for n in _merge(c, defaults, "init container")]
    if notes:
        meta = pod.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), ANNOTATION: "LimitRanger plugin set: " +
                               "; ".join(notes)}


def _values(request: Quantity | None, limit: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: at milli precision unless a value would overflow it."""
    quantities = [q.scaled(0) if q is not None else 0 for q in (request, limit, enforced)]
    if all(v <= MAX_MILLI_VALUE for v in quantities):
        quantities = [q.scaled(-3) if q is not None else 0 for q in (request, limit, enforced)]
    return quantities[0], quantities[1], quantities[2]


def min_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList,
                   limits: ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    req, lim, value = _values(request, limit, enforced)
    if request is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if req < value:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {request}"
    if limit is not None and lim < value:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"
    return None


def max_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList,
                   limits: ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    req, lim, value = _values(request, limit, enforced)
    if limit is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if lim > value:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"
    if request is not None and req > value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def max_request_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList) -> str | None:
    request = requests.get(name)
    req, _, value = _values(request, None, enforced)
    if request is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if req > value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def ratio_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList,
                     limits: ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    req, lim, _ = _values(request, limit, enforced)
    prefix = f"{name} max limit to request ratio per {kind} is {enforced}, but"
    if request is None or req == 0:
        return f"{prefix} no request is specified or request is 0"
    if limit is None or lim == 0:
        return f"{prefix} no limit is specified or limit is 0"
    observed = shown = lim / req
    allowed = float(enforced.scaled(0))
    if enforced.scaled(0) <= MAX_MILLI_VALUE:
        observed, allowed = observed * 1000, float(enforced.scaled(-3))
    if observed > allowed:
        return f"{prefix} provided ratio is {go_float(shown)}"
    return None


def check_item(item: Object, kind: str, requests: ResourceList, limits: ResourceList) -> list[str]:
    """One LimitRange item's min, max and maxLimitRequestRatio against one container's or pod's values."""
    checks = (("min", min_constraint), ("max", max_constraint), ("maxLimitRequestRatio", ratio_constraint))
    found = []
    for key, check in checks:
        for name, enforced in sorted(parsed(item.get(key)).items()):
            if (why := check(kind, name, enforced, requests, limits)) is not None:
                found.append(why)
    return found


def validate_pod(limit_range: Object, pod: Object) -> list[str]:
    """PodValidateLimitFunc."""
    spec, found = pod.get("spec") or {}, []
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") == "Container":
            for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
                resources = container.get("resources") or {}
                found += check_item(item, "Container", parsed(resources.get("requests")),
                                    parsed(resources.get("limits")))
        if item.get("type") == "Pod":
            found += check_item(item, "Pod", container_aggregate(pod, "requests"), container_aggregate(pod, "limits"))
    return found


def validate_claim(limit_range: Object, pvc: Object) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc: storage requests within min and max."""
    requests = parsed(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))
    found = []
    for item in _items(limit_range, "PersistentVolumeClaim"):
        for name, enforced in sorted(parsed(item.get("min")).items()):
            if (why := min_constraint("PersistentVolumeClaim", name, enforced, requests, {})) is not None:
                found.append(why)
        for name, enforced in sorted(parsed(item.get("max")).items()):
            if (why := max_request_constraint("PersistentVolumeClaim", name, enforced, requests)) is not None:
                found.append(why)
    return found


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# Namespaces whose live lookup of limit ranges is kept (LIVE_TTL, 30 s), as NewLimitRanger's LRU.
LIVE_LOOKUP_CACHE_SIZE = 10_000


class LimitRanger:
    name = "LimitRanger"

    def __init__(self, lister: NamespacedLister):
        self.lister = lister

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE)

    @staticmethod
    def supports(attrs: Attributes) -> bool:
        """Pods on create and claims; never a subresource."""
        if attrs.subresource or attrs.group:
            return False
        if attrs.kind == "Pod":
            return attrs.operation != UPDATE
        return attrs.kind == "PersistentVolumeClaim"

    async def admit(self, attrs: Attributes) -> None:
        if self.supports(attrs) and attrs.kind == "Pod" and not self._deleting(attrs):
            for limit_range in await self.lister.list(attrs.namespace):
                mutate_pod(limit_range, attrs.object or {})

    async def validate(self, attrs: Attributes) -> None:
        if not self.supports(attrs) or self._deleting(attrs):
            return
        check = validate_pod if attrs.kind == "Pod" else validate_claim
        for limit_range in await self.lister.list(attrs.namespace):
            found = check(limit_range, attrs.object or {})
            if found:
                raise forbidden(attrs, aggregate(found))

    @staticmethod
    def _deleting(attrs: Attributes) -> bool:
        return bool(((attrs.old_object or {}).get("metadata") or {}).get("deletionTimestamp"))
