"""Priority (plugin/pkg/admission/priority): a new pod's spec.priority and spec.preemptionPolicy come from
its PriorityClass, or from the global default class (the one with the lowest value should several claim it),
else 0 and PreemptLowerPriority. A pod may repeat those values but not contradict them; updates keep what
creation set. Only one PriorityClass may be the global default."""

from __future__ import annotations

from typing import Any, Protocol

from ..apimachinery import errors
from .interfaces import CREATE, DELETE, UPDATE, Attributes, forbidden

Object = dict[str, Any]
GROUP = "scheduling.k8s.io"
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
NOT_A_POD = "resource was marked with kind Pod but was unable to be converted"


class ClassLister(Protocol):
    async def list(self, namespace: str, live: bool = False, shared: bool = False) -> list[Object]: ...


def _name(obj: Object) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class Priority:
    name = "Priority"

    def __init__(self, classes: ClassLister):
        self.classes = classes

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE, DELETE)

    async def get(self, name: str) -> Object | None:
        """The named class from the cache, read live when the cache does not show it yet."""
        for live in (False, True):
            found = next((pc for pc in await self.classes.list("", live, shared=True)
                          if _name(pc) == name), None)
            if found is not None:
                return found
        return None

    async def default_class(self) -> Object | None:
        """The global default; should a race have made several, the one with the lowest value."""
        defaults = [pc for pc in await self.classes.list("", shared=True) if pc.get("globalDefault")]
        return min(defaults, key=lambda pc: pc.get("value", 0), default=None)

    async def admit(self, attrs: Attributes) -> None:
        if attrs.subresource or attrs.group or attrs.resource != "pods":
            return
        if attrs.operation not in (CREATE, UPDATE):
            return
        if not isinstance(attrs.object, dict):
            raise errors.bad_request(NOT_A_POD)
        spec = attrs.object.get("spec")
        if not isinstance(spec, dict):
            spec = attrs.object["spec"] = {}
        if attrs.operation == UPDATE:
            self._keep_resolved(spec, attrs.old_object)
        else:
            await self._resolve(attrs, spec)

    @staticmethod
    def _keep_resolved(spec: Object, old: Any) -> None:
        """An update that omits what creation resolved keeps it (validation refuses any other change)."""
        if not isinstance(old, dict):
            raise errors.bad_request(NOT_A_POD)
        old_spec = old.get("spec") or {}
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]

    async def _resolve(self, attrs: Attributes, spec: Object) -> None:
        class_name = spec.get("priorityClassName") or ""
        if not class_name:
            pc = await self.default_class()
            if pc is not None:
                spec["priorityClassName"] = _name(pc)
            priority = pc.get("value", 0) if pc else DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS
            policy = pc.get("preemptionPolicy") if pc else PREEMPT_LOWER_PRIORITY
        else:
            pc = await self.get(class_name)
            if pc is None:
                raise forbidden(attrs, f"no PriorityClass with name {class_name} was found")
            priority, policy = pc.get("value", 0), pc.get("preemptionPolicy")
        given, given_policy = spec.get("priority"), spec.get("preemptionPolicy")
        if given is not None and given != priority:
            raise forbidden(attrs, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                   f"priority admission controller computed {priority} from the given "
                                   f"PriorityClass name")
        spec["priority"] = priority
        if policy is None:
            return
        if given_policy is not None and given_policy != policy:
            raise forbidden(attrs, f"the string value of PreemptionPolicy ({given_policy}) must not be provided in "
                                   f"pod spec; priority admission controller computed {policy} from the given "
                                   f"PriorityClass name")
        spec["preemptionPolicy"] = policy

    async def validate(self, attrs: Attributes) -> None:
        if attrs.subresource or attrs.group != GROUP or attrs.resource != "priorityclasses":
            return
        if attrs.operation not in (CREATE, UPDATE):
            return
        if not isinstance(attrs.object, dict):
            raise errors.bad_request("resource was marked with kind PriorityClass but was unable to be converted")
        if not attrs.object.get("globalDefault"):
            return
        current = await self.default_class()
        # A second default, or another class becoming the default, is refused; the default may be updated.
        if current is not None and (attrs.operation == CREATE or _name(current) != _name(attrs.object)):
            raise forbidden(attrs, f"PriorityClass {_name(current)} is already marked as default. "
                                   f"Only one default can exist")
