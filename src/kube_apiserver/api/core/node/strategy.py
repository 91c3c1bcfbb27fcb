"""The node strategy and its status strategy (pkg/registry/core/node/strategy.go): a node may be created
with its status (kubelets register that way); later only nodes/status writes it."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import field
from ....apimachinery.meta import spec_of
from ....registry.context import Context
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ..kubelet import NODES
from ..pod.strategy import decode_defaults
from ..podspec.defaults import default_resource_list
from ..volumetypes import check_kind
from .validation import validate_node, validate_node_update

Object = dict[str, Any]
INFO = NODES
CONFIG_SOURCE_WARNING = "spec.configSource: the feature is removed"
EXTERNAL_ID_WARNING = "spec.externalID: this field is deprecated, and is unused by Kubernetes"
NODE_INFO_FIELDS = ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
                    "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture")


def zero_status(status: Object) -> None:
    """The NodeStatus fields Go always encodes (no omitempty): the kubelet port and the system info."""
    endpoints = status.setdefault("daemonEndpoints", {})
    if isinstance(endpoints, dict):
        kubelet = endpoints.setdefault("kubeletEndpoint", {})
        if isinstance(kubelet, dict):
            kubelet.setdefault("Port", 0)
    info = status.setdefault("nodeInfo", {})
    for key in NODE_INFO_FIELDS if isinstance(info, dict) else ():
        info.setdefault(key, "")


def default_node(obj: Object) -> None:
    """SetObjectDefaults_Node (SetDefaults_NodeStatus: allocatable is the capacity when unset) and the v1
    conversion of spec.podCIDR to and from spec.podCIDRs."""
    spec, status = obj.setdefault("spec", {}), obj.setdefault("status", {})
    if isinstance(spec, dict):
        if not spec.get("podCIDRs") and spec.get("podCIDR"):
            spec["podCIDRs"] = [spec["podCIDR"]]
        if spec.get("podCIDRs"):
            spec["podCIDR"] = spec["podCIDRs"][0]
        else:
            spec.pop("podCIDR", None)
    if isinstance(status, dict):
        default_resource_list(status.get("capacity"))
        default_resource_list(status.get("allocatable"))
        if status.get("allocatable") is None and status.get("capacity") is not None:
            status["allocatable"] = copy.deepcopy(status["capacity"])
        zero_status(status)


def _warn(ctx: Context, obj: Object) -> None:
    """fieldIsDeprecatedWarnings."""
    spec = spec_of(obj)
    for present, text in ((spec.get("configSource") is not None, CONFIG_SOURCE_WARNING),
                          (bool(spec.get("externalID")), EXTERNAL_ID_WARNING)):
        if present and text not in ctx.warnings:
            ctx.warnings.append(text)


class NodeStrategy(Strategy):
    reset_fields = (("status",),)
    selectable_fields = ("spec.unschedulable",)

    def default(self, obj: Object) -> None:
        check_kind("Node", obj)
        decode_defaults("Node", default_node, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        """Nodes allow every field, status included, on create; configSource is dropped."""
        spec_of(obj).pop("configSource", None)
        if isinstance(obj.get("status"), dict):
            obj["status"].pop("config", None)
        _warn(ctx, obj)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        if "status" in old:
            obj["status"] = copy.deepcopy(old["status"])
        else:
            obj.pop("status", None)
        if spec_of(old).get("configSource") is None:
            spec_of(obj).pop("configSource", None)
        _warn(ctx, obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_node(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return super().validate_update(ctx, obj, old) + validate_node_update(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["spec.unschedulable"] = "true" if spec_of(obj).get("unschedulable") else "false"
        return fields


class NodeStatusStrategy(SubresourceStrategy):
    """nodeStatusStrategy: the spec stays as stored; validated by ValidateNodeUpdate alone."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        if not isinstance(old.get("status"), dict) or old["status"].get("config") is None:
            if isinstance(obj.get("status"), dict):
                obj["status"].pop("config", None)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_node_update(obj, old)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=NodeStatusStrategy(store.strategy))
