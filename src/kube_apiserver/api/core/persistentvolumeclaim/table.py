"""The columns `kubectl get pvc` prints (printPersistentVolumeClaim in pkg/printers/internalversion)."""

from __future__ import annotations

from typing import Any

from ....apimachinery.meta import spec_of, status_of
from ....registry.rest import TableColumn
from ....registry.table import AGE, NAME, TableConvertor, age, name
from ..persistentvolume.helpers import access_modes_string, volume_class
from ..persistentvolume.table import phase

Object = dict[str, Any]
COLUMNS = (
    NAME,
    TableColumn("Status", "string", "", "phase represents the current phase of PersistentVolumeClaim."),
    TableColumn("Volume", "string", "", "volumeName is the binding reference to the PersistentVolume backing this "
                                        "claim."),
    TableColumn("Capacity", "string", "", "capacity represents the actual resources of the underlying volume."),
    TableColumn("Access Modes", "string", "", "accessModes contains the actual access modes the volume backing the "
                "PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
    TableColumn("StorageClass", "string", "", "StorageClass of the pvc"),
    TableColumn("VolumeAttributesClass", "string", "", "VolumeAttributesClass of the pvc"),
    AGE,
    TableColumn("VolumeMode", "string", "", "volumeMode defines what type of volume is required by the claim. "
                "Value of Filesystem is implied when not included in claim spec.", 1),
)


def _row(obj: Object) -> list[Any]:
    spec, status = spec_of(obj), status_of(obj)
    volume = spec.get("volumeName") or ""
    capacity = modes = ""
    if volume:
        modes = access_modes_string(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage") or "0")
    attributes = spec.get("volumeAttributesClassName")
    return [name(obj), phase(obj), volume, capacity, modes, volume_class(obj),
            "<unset>" if attributes is None else attributes, age(obj), spec.get("volumeMode") or "<unset>"]


TABLE = TableConvertor(COLUMNS, _row)
