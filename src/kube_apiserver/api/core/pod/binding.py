"""pods/binding and the legacy `bindings` resource: assign a pod to a node (BindingREST)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import errors, field
from ....apimachinery.meta import now_rfc3339
from ....registry.context import Context
from ....registry.rest import ResourceInfo, ValidateObjectFunc
from ....registry.store import Store
from ....storage import interface as storage

Object = dict[str, Any]


def validate_binding(binding: Object) -> field.ErrorList:
    """ValidatePodBinding."""
    target = binding.get("target") if isinstance(binding.get("target"), dict) else {}
    errs: field.ErrorList = []
    if target.get("kind") and target["kind"] != "Node":
        errs.append(field.not_supported(field.Path("target", "kind"), target["kind"], ["Node", "<empty>"]))
    if not target.get("name"):
        errs.append(field.required(field.Path("target", "name"), ""))
    return errs


def success(code: int = 201) -> Object:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


class BindingConflict(Exception):
    pass


def update_pod_condition(pod: Object, condition: Object) -> None:
    """podutil.UpdatePodCondition: a new condition gets lastTransitionTime now; a changed status too."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for existing in conditions:
        if existing.get("type") == condition["type"]:
            if existing.get("status") != condition["status"]:
                existing["lastTransitionTime"] = now_rfc3339()
            existing.update({k: v for k, v in condition.items() if k != "lastTransitionTime"})
            return
    conditions.append({**condition, "lastProbeTime": None, "lastTransitionTime": now_rfc3339()})


class BindingREST:
    """POST a Binding: sets spec.nodeName of a pod that has none (409 otherwise)."""

    def __init__(self, pods: Store, subresource: str):
        resource = "pods" if subresource else "bindings"
        self.info = ResourceInfo("", "v1", resource, "Binding", "binding" if not subresource else "", True,
                                 subresource=subresource)
        self.pods = pods

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        meta = obj.get("metadata") or {}
        url_name = (options or {}).get("name")
        if self.info.subresource and url_name != meta.get("name"):
            raise errors.bad_request("name in URL does not match name in Binding object")
        errs = validate_binding(obj)
        if errs:
            raise errors.StatusError(500, "", field.aggregate_message(errs))
        if create_validation is not None:
            await create_validation(ctx, obj)
        await self._assign(ctx, meta, obj["target"]["name"])
        return success()

    async def _assign(self, ctx: Context, meta: Object, node: str) -> None:
        pod_name = meta.get("name") or ""
        annotations = meta.get("annotations") or {}

        async def bind(pod: Object) -> Object:
            if pod["metadata"].get("deletionTimestamp"):
                raise BindingConflict(f"pod {pod_name} is being deleted, cannot be assigned to a host")
            if (pod.get("spec") or {}).get("nodeName"):
                raise BindingConflict(f'pod {pod_name} is already assigned to node "{pod["spec"]["nodeName"]}"')
            if (pod.get("spec") or {}).get("schedulingGates"):
                raise BindingConflict(f"pod {pod_name} has non-empty .spec.schedulingGates")
            pod["spec"]["nodeName"] = node
            if annotations:
                pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), **annotations}
            update_pod_condition(pod, {"type": "PodScheduled", "status": "True"})
            return pod

        key = self.pods.key(ctx, pod_name)
        preconditions = storage.Preconditions(meta.get("uid") or None, meta.get("resourceVersion") or None)
        try:
            if ctx.dry_run:
                await bind(await self.pods.get(ctx, pod_name))
            else:
                await self.pods.storage.guaranteed_update(key, bind, preconditions)
        except BindingConflict as err:
            raise errors.conflict("pods/binding", "", pod_name, str(err)) from None
        except storage.StorageError as err:
            raise self.pods.interpret(err, pod_name) from None


