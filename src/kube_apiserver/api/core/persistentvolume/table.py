"""The columns `kubectl get pv` prints (printPersistentVolume in pkg/printers/internalversion)."""

from __future__ import annotations

from typing import Any

from ....apimachinery.meta import spec_of, status_of
from ....registry.rest import TableColumn
from ....registry.table import AGE, NAME, TableConvertor, age, name
from .helpers import access_modes_string, volume_class

Object = dict[str, Any]
COLUMNS = (
    NAME,
    TableColumn("Capacity", "string", "", "capacity is the description of the persistent volume's resources and "
                "capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"),
    TableColumn("Access Modes", "string", "", "accessModes contains all ways the volume can be mounted. More info: "
                "https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"),
    TableColumn("Reclaim Policy", "string", "", "persistentVolumeReclaimPolicy defines what happens to a persistent "
                "volume when released from its claim. Valid options are Retain (default for manually created "
                "PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle "
                "(deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. "
                "More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"),
    TableColumn("Status", "string", "", "phase indicates if a volume is available, bound to a claim, or released "
                "by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"),
    TableColumn("Claim", "string", "", "claimRef is part of a bi-directional binding between PersistentVolume and "
                "PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative "
                "bind between PV and PVC. More info: "
                "https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"),
    TableColumn("StorageClass", "string", "", "StorageClass of the pv"),
    TableColumn("VolumeAttributesClass", "string", "", "VolumeAttributesClass of the pv"),
    TableColumn("Reason", "string", "", "reason is a brief CamelCase string that describes any failure and is "
                "meant for machine parsing and tidy display in the CLI."),
    AGE,
    TableColumn("VolumeMode", "string", "", "volumeMode defines if a volume is intended to be used with a "
                "formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not "
                "included in spec.", 1),
)


def phase(obj: Object) -> str:
    """The phase, or Terminating once deletion started."""
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return status_of(obj).get("phase") or ""


def _row(obj: Object) -> list[Any]:
    spec = spec_of(obj)
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if isinstance(ref, dict) else ""
    capacity = str((spec.get("capacity") or {}).get("storage") or "0")
    attributes = spec.get("volumeAttributesClassName")
    return [name(obj), capacity, access_modes_string(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy") or "", phase(obj), claim, volume_class(obj),
            "<unset>" if attributes is None else attributes, status_of(obj).get("reason") or "", age(obj),
            spec.get("volumeMode") or "<unset>"]


TABLE = TableConvertor(COLUMNS, _row)
