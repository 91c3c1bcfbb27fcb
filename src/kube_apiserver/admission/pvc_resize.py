"""PersistentVolumeClaimResize: a claim's storage request grows only when it is bound and its StorageClass
allows volume expansion (plugin/pkg/admission/storage/persistentvolume/resize)."""

from __future__ import annotations

from typing import Any

from ..api.core.persistentvolume.helpers import volume_class
from ..apimachinery import quantity
from .interfaces import UPDATE, Attributes, forbidden
from .lister import NamespacedLister

Object = dict[str, Any]
NOT_BOUND = "Only bound persistent volume claims can be expanded"
NOT_EXPANDABLE = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc "
                  "must support resize")


def requested_storage(claim: Object) -> quantity.Quantity:
    raw = (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return quantity.parse(raw if raw is not None else "0")
    except quantity.QuantityError:
        return quantity.parse("0")


class PersistentVolumeClaimResize:
    name = "PersistentVolumeClaimResize"

    def __init__(self, classes: NamespacedLister):
        self.classes = classes

    def handles(self, operation: str) -> bool:
        return operation == UPDATE

    async def validate(self, attrs: Attributes) -> None:
        claim, old = attrs.object, attrs.old_object
        if attrs.group or attrs.resource != "persistentvolumeclaims" or attrs.subresource or \
                not isinstance(claim, dict) or not isinstance(old, dict):
            return
        if requested_storage(claim).value <= requested_storage(old).value:
            return
        if (old.get("status") or {}).get("phase") != "Bound":
            raise forbidden(attrs, NOT_BOUND)
        if not await self._allows_expansion(volume_class(claim), volume_class(old)):
            raise forbidden(attrs, NOT_EXPANDABLE)

    async def _allows_expansion(self, name: str, old_name: str) -> bool:
        """allowResize: the claim keeps its class, and that class sets allowVolumeExpansion."""
        if not name or name != old_name:
            return False
        for storage_class in await self.classes.list(""):
            if storage_class["metadata"].get("name") == name:
                return storage_class.get("allowVolumeExpansion") is True
        return False
