"""StorageObjectInUseProtection: every new PersistentVolume and PersistentVolumeClaim gets the finalizer that
keeps it until nothing uses it (plugin/pkg/admission/storage/storageobjectinuseprotection)."""

from __future__ import annotations

from .interfaces import CREATE, Attributes

FINALIZERS = {"persistentvolumes": "kubernetes.io/pv-protection",
              "persistentvolumeclaims": "kubernetes.io/pvc-protection"}


class StorageObjectInUseProtection:
    name = "StorageObjectInUseProtection"

    def handles(self, operation: str) -> bool:
        return operation == CREATE

    async def admit(self, attrs: Attributes) -> None:
        finalizer = FINALIZERS.get(attrs.resource)
        if attrs.group or finalizer is None or attrs.subresource or not isinstance(attrs.object, dict):
            return
        meta = attrs.object.setdefault("metadata", {})
        finalizers = list(meta.get("finalizers") or [])
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]
