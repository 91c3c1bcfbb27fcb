"""The Go shapes of Node, PersistentVolume and PersistentVolumeClaim (k8s.io/api core/v1) that decoding
checks (apimachinery/jsontypes.py): a body that does not fit is a 400, as in Kubernetes. Named string types
are checked as strings; quantities are left to the quantity parser."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors
from ...apimachinery.jsontypes import ListOf, Struct
from .gotypes import OBJECT_META, check_decodable


def _strings(name: str, *keys: str, **more: object) -> Struct:
    return Struct(name, f"v1.{name}", {**dict.fromkeys(keys, "string"), **more})


TAINT = _strings("Taint", "key", "value", "effect", "timeAdded")
NODE = Struct("Node", "v1.Node", {
    "metadata": OBJECT_META,
    "spec": _strings("NodeSpec", "podCIDR", "providerID", "externalID", podCIDRs="[]string", unschedulable="bool",
                     taints=ListOf(TAINT)),
    "status": _strings(
        "NodeStatus", "phase", volumesInUse="[]string",
        conditions=ListOf(_strings("NodeCondition", "type", "status", "reason", "message")),
        addresses=ListOf(_strings("NodeAddress", "type", "address")),
        daemonEndpoints=Struct("NodeDaemonEndpoints", "v1.NodeDaemonEndpoints", {
            "kubeletEndpoint": Struct("DaemonEndpoint", "v1.DaemonEndpoint", {"Port": "int32"})}),
        nodeInfo=_strings("NodeSystemInfo", "machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                          "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion", "operatingSystem",
                          "architecture"),
        images=ListOf(Struct("ContainerImage", "v1.ContainerImage", {"names": "[]string", "sizeBytes": "int64"})),
        volumesAttached=ListOf(_strings("AttachedVolume", "name", "devicePath")))})

OBJECT_REFERENCE = _strings("ObjectReference", "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                            "fieldPath")
PERSISTENT_VOLUME = Struct("PersistentVolume", "v1.PersistentVolume", {
    "metadata": OBJECT_META,
    "spec": _strings(
        "PersistentVolumeSpec", "persistentVolumeReclaimPolicy", "storageClassName", "volumeMode",
        "volumeAttributesClassName", accessModes="[]string", mountOptions="[]string", claimRef=OBJECT_REFERENCE,
        hostPath=_strings("HostPathVolumeSource", "path", "type"),
        nfs=_strings("NFSVolumeSource", "server", "path", readOnly="bool"),
        local=_strings("LocalVolumeSource", "path", "fsType"),
        csi=_strings("CSIPersistentVolumeSource", "driver", "volumeHandle", "fsType", readOnly="bool",
                     volumeAttributes="map[string]string")),
    "status": _strings("PersistentVolumeStatus", "phase", "message", "reason", "lastPhaseTransitionTime")})

TYPED_REFERENCE = _strings("TypedObjectReference", "apiGroup", "kind", "name", "namespace")
PERSISTENT_VOLUME_CLAIM = Struct("PersistentVolumeClaim", "v1.PersistentVolumeClaim", {
    "metadata": OBJECT_META,
    "spec": _strings(
        "PersistentVolumeClaimSpec", "volumeName", "storageClassName", "volumeMode", "volumeAttributesClassName",
        accessModes="[]string", resources=Struct("VolumeResourceRequirements", "v1.VolumeResourceRequirements", {}),
        dataSource=_strings("TypedLocalObjectReference", "apiGroup", "kind", "name"), dataSourceRef=TYPED_REFERENCE),
    "status": _strings("PersistentVolumeClaimStatus", "phase", accessModes="[]string",
                       allocatedResourceStatuses="map[string]string",
                       conditions=ListOf(_strings("PersistentVolumeClaimCondition", "type", "status", "reason",
                                                  "message")))})

# The ResourceLists of each kind: (holder struct, path from the root).
RESOURCE_LISTS = {
    "Node": (("NodeStatus", ("status", "capacity")), ("NodeStatus", ("status", "allocatable"))),
    "PersistentVolume": (("PersistentVolumeSpec", ("spec", "capacity")),),
    "PersistentVolumeClaim": (("VolumeResourceRequirements", ("spec", "resources", "limits")),
                              ("VolumeResourceRequirements", ("spec", "resources", "requests")),
                              ("PersistentVolumeClaimStatus", ("status", "capacity")),
                              ("PersistentVolumeClaimStatus", ("status", "allocatedResources"))),
}
SHAPES = {"Node": NODE, "PersistentVolume": PERSISTENT_VOLUME, "PersistentVolumeClaim": PERSISTENT_VOLUME_CLAIM}


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def check_kind(kind: str, obj: dict[str, Any]) -> None:
    """A 400 for a body that does not decode into the kind's Go struct."""
    check_decodable(kind, obj, SHAPES[kind])
    for holder, path in RESOURCE_LISTS[kind]:
        value = _at(obj, path)
        if value is not None and not isinstance(value, dict):
            found = "array" if isinstance(value, list) else "string" if isinstance(value, str) else "number"
            raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal '
                                     f"{found} into Go struct field {holder}.{'.'.join(path)} of type "
                                     "v1.ResourceList")
