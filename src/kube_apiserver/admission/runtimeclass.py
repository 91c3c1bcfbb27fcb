"""RuntimeClass (plugin/pkg/admission/runtimeclass): a new pod naming a RuntimeClass gets the class's pod
overhead and its scheduling constraints (nodeSelector merged, tolerations merged as
pkg/util/tolerations.MergeTolerations does); a pod may only carry an overhead its RuntimeClass defines."""

from __future__ import annotations

import copy
from typing import Any, Protocol

from ..apimachinery import errors, quantity
from ..apimachinery.field import go_quote
from .interfaces import CREATE, Attributes, forbidden

Object = dict[str, Any]
OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


class ClassLister(Protocol):
    async def list(self, namespace: str, live: bool = False) -> list[Object]: ...


def _amount(value: Any) -> Any:
    try:
        return quantity.parse(value).value
    except (quantity.QuantityError, TypeError, ValueError):
        return value  # left for validation to report; compared as given


def same_resources(a: Object | None, b: Object | None) -> bool:
    """Semantic equality of two ResourceLists: the same names, with equal quantities."""
    a, b = a or {}, b or {}
    return a.keys() == b.keys() and all(_amount(a[name]) == _amount(b[name]) for name in a)


def _toleration(t: Object) -> tuple[Any, ...]:
    """A toleration's fields, unset ones as Go's zero values."""
    return (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "",
            t.get("tolerationSeconds"))


def is_superset(ss: Object, t: Object) -> bool:
    """Whether toleration ss tolerates everything t does."""
    if _toleration(ss) == _toleration(t):
        return True
    ss_key, ss_op, ss_value, ss_effect, ss_seconds = _toleration(ss)
    t_key, t_op, t_value, t_effect, t_seconds = _toleration(t)
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):  # an empty key with Exists matches every key
        return False
    if t_effect != ss_effect and ss_effect != "":  # an empty effect matches every effect
        return False
    if ss_effect == "NoExecute" and ss_seconds is not None and (t_seconds is None or t_seconds > ss_seconds):
        return False
    if ss_op in ("Equal", ""):  # an empty operator means Equal
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"


def merge_tolerations(first: list[Object], second: list[Object]) -> list[Object]:
    """Both lists without the tolerations another one covers (of equal ones, the first is kept)."""
    every = [t for t in [*first, *second] if isinstance(t, dict)]
    merged: list[Object] = []
    for i, t in enumerate(every):
        if any(is_superset(kept, t) for kept in merged):
            continue
        if any(_toleration(t) != _toleration(later) and is_superset(later, t) for later in every[i + 1:]):
            continue
        merged.append(t)
    return merged


def _pod_fixed(runtime_class: Object | None) -> Object | None:
    overhead = (runtime_class or {}).get("overhead")
    return overhead.get("podFixed") if isinstance(overhead, dict) else None


class RuntimeClass:
    name = "RuntimeClass"

    def __init__(self, classes: ClassLister):
        self.classes = classes

    def handles(self, operation: str) -> bool:
        return operation == CREATE

    @staticmethod
    def _ignored(attrs: Attributes) -> bool:
        return bool(attrs.subresource) or attrs.group != "" or attrs.resource != "pods"

    async def _prepare(self, attrs: Attributes) -> tuple[Object, Object | None]:
        """The pod's spec and its RuntimeClass (read live when the cache does not show it yet)."""
        if not isinstance(attrs.object, dict):
            raise errors.bad_request("Resource was marked with kind Pod but was unable to be converted")
        spec = attrs.object.get("spec")
        if not isinstance(spec, dict):
            spec = attrs.object["spec"] = {}
        class_name = spec.get("runtimeClassName")
        if class_name is None:
            return spec, None
        for live in (False, True):
            for runtime_class in await self.classes.list("", live):
                if (runtime_class.get("metadata") or {}).get("name") == class_name:
                    return spec, runtime_class
        raise forbidden(attrs, f"pod rejected: RuntimeClass {go_quote(str(class_name))} not found")

    async def admit(self, attrs: Attributes) -> None:
        if self._ignored(attrs):
            return
        spec, runtime_class = await self._prepare(attrs)
        self._set_overhead(attrs, spec, runtime_class)
        self._set_scheduling(attrs, spec, runtime_class)

    async def validate(self, attrs: Attributes) -> None:
        if self._ignored(attrs):
            return
        spec, runtime_class = await self._prepare(attrs)
        if not spec.get("overhead"):
            return
        if not isinstance((runtime_class or {}).get("overhead"), dict):
            raise forbidden(attrs, OVERHEAD_WITHOUT_CLASS)
        if not same_resources(_pod_fixed(runtime_class), spec["overhead"]):
            raise forbidden(attrs, OVERHEAD_MISMATCH)

    @staticmethod
    def _set_overhead(attrs: Attributes, spec: Object, runtime_class: Object | None) -> None:
        if not isinstance((runtime_class or {}).get("overhead"), dict):
            return
        pod_fixed = _pod_fixed(runtime_class)
        if spec.get("overhead") and not same_resources(pod_fixed, spec["overhead"]):
            raise forbidden(attrs, OVERHEAD_MISMATCH)
        if pod_fixed:
            spec["overhead"] = copy.deepcopy(pod_fixed)
        else:
            spec.pop("overhead", None)

    @staticmethod
    def _set_scheduling(attrs: Attributes, spec: Object, runtime_class: Object | None) -> None:
        scheduling = (runtime_class or {}).get("scheduling")
        if not isinstance(scheduling, dict):
            return
        class_selector = scheduling.get("nodeSelector") or {}
        node_selector = spec.get("nodeSelector")
        if node_selector is None:
            node_selector = dict(class_selector) or None
        else:
            for key, value in class_selector.items():
                if key in node_selector and node_selector[key] != value:
                    raise forbidden(attrs, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                           f"pod.spec.nodeSelector[{key}] = {node_selector[key]}")
                node_selector[key] = value
        if node_selector is not None:
            spec["nodeSelector"] = node_selector
        added = copy.deepcopy(scheduling.get("tolerations") or [])
        tolerations = merge_tolerations(spec.get("tolerations") or [], added)
        if tolerations:
            spec["tolerations"] = tolerations
        else:
            spec.pop("tolerations", None)
