"""pods/resize: in-place changes of containers' cpu and memory (podResizeStrategy, ValidatePodResize)."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import field
from ....apimachinery.field import ErrorList, Path
from ..podspec import compute_qos
from ..podspec.resources import parsed
from .strategy import POD_OPTIONS
from .subresources_meta import reset_meta_for_status
from .validation import validate_metadata_and_spec

Object = dict[str, Any]
SPEC = Path("spec")
RESIZABLE = ("cpu", "memory")


def _containers(obj: Object, key: str) -> list[Object]:
    return (obj.get("spec") or {}).get(key) or []


def _merge(new: list[Object], old: list[Object]) -> list[Object] | None:
    if any(n.get("name") != o.get("name") for n, o in zip(new, old, strict=False)):
        return None
    merged = copy.deepcopy(old)
    for container, source in zip(merged, new, strict=False):
        for key in ("resources", "resizePolicy"):
            if key in source:
                container[key] = copy.deepcopy(source[key])
            else:
                container.pop(key, None)
    return merged


def keep_resize(new: Object, old: Object) -> Object:
    """dropNonResizeUpdates: only containers' resources and resizePolicy come from the request."""
    keys = ("containers", "initContainers")
    if any(len(_containers(new, k)) != len(_containers(old, k)) for k in keys):
        return new
    merged_lists = {k: _merge(_containers(new, k), _containers(old, k)) for k in keys}
    if any(v is None for v in merged_lists.values()):
        return new
    merged = copy.deepcopy({k: v for k, v in old.items() if k != "metadata"})
    merged["metadata"] = reset_meta_for_status(new, old)
    for key, containers in merged_lists.items():
        if containers:
            merged["spec"][key] = containers
    return merged


def _without_cpu_memory(container: Object) -> Object:
    stripped = copy.deepcopy(container)
    resources = stripped.get("resources") or {}
    for key in ("limits", "requests"):
        if isinstance(resources.get(key), dict):
            resources[key] = {k: v for k, v in resources[key].items() if k not in RESIZABLE}
    stripped.pop("resizePolicy", None)
    return stripped


def _container_resize(new: Object, old: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    new_res, old_res = new.get("resources") or {}, old.get("resources") or {}
    for key, what in (("requests", "resource requests"), ("limits", "resource limits")):
        if set(old_res.get(key) or {}) - set(new_res.get(key) or {}):
            errs.append(field.forbidden(path.child(key), f"{what} cannot be removed"))
    memory_policy = next((p.get("restartPolicy") for p in new.get("resizePolicy") or []
                          if p.get("resourceName") == "memory"), "")
    if memory_policy in ("", "NotRequired"):
        new_limit = parsed(new_res.get("limits")).get("memory")
        old_limit = parsed(old_res.get("limits")).get("memory")
        if new_limit is not None and old_limit is not None and new_limit.value < old_limit.value:
            errs.append(field.forbidden(path.child("limits").key("memory"),
                                        "memory limits cannot be decreased unless resizePolicy is RestartContainer"))
        elif new_limit is not None and old_limit is None:
            errs.append(field.forbidden(path.child("limits").key("memory"),
                                        "memory limits cannot be added unless resizePolicy is RestartContainer"))
    return errs


def validate_resize(new: Object, old: Object) -> ErrorList:
    errs = validate_metadata_and_spec(new, POD_OPTIONS)
    if "kubernetes.io/config.mirror" in (old["metadata"].get("annotations") or {}):
        return [field.forbidden(Path(""), "static pods cannot be resized")]
    if ((old.get("spec") or {}).get("os") or {}).get("name") == "windows":
        return [field.forbidden(Path(""), "windows pods cannot be resized")]
    if compute_qos(old.get("spec") or {}) != compute_qos(new.get("spec") or {}):
        errs.append(field.invalid(SPEC, (new.get("status") or {}).get("qosClass") or "",
                                  "Pod QOS Class may not change as a result of resizing"))
    new_containers, old_containers = _containers(new, "containers"), _containers(old, "containers")
    for i, previous in enumerate(old_containers[:len(new_containers)]):
        errs += _container_resize(new_containers[i], previous, SPEC.child("containers").index(i).child("resources"))
        if _without_cpu_memory(new_containers[i]) != _without_cpu_memory(previous):
            errs.append(field.forbidden(SPEC, "only cpu and memory resources are mutable"))
    if errs:
        return errs
    rest_new = {k: v for k, v in (new.get("spec") or {}).items() if k not in ("containers", "initContainers")}
    rest_old = {k: v for k, v in (old.get("spec") or {}).items() if k not in ("containers", "initContainers")}
    if rest_new != rest_old or len(new_containers) != len(old_containers):
        errs.append(field.forbidden(SPEC, "only cpu and memory resources are mutable"))
    return errs
