"""DefaultStorageClass: a new claim that asks for no class gets the default StorageClass, the newest when
several are marked default (plugin/pkg/admission/storage/storageclass/setdefault, util.GetDefaultClass)."""

from __future__ import annotations

from typing import Any

from ..api.core.persistentvolume.helpers import claim_has_class
from ..api.storage.storageclass import is_default_class
from .interfaces import CREATE, Attributes
from .lister import NamespacedLister

Object = dict[str, Any]


def default_class(classes: list[Object]) -> Object | None:
    """Of the classes marked default: the newest, then the first by name."""
    defaults = [c for c in classes if is_default_class(c)]
    defaults.sort(key=lambda c: c["metadata"].get("name", ""))
    defaults.sort(key=lambda c: c["metadata"].get("creationTimestamp") or "", reverse=True)
    return defaults[0] if defaults else None


class DefaultStorageClass:
    name = "DefaultStorageClass"

    def __init__(self, classes: NamespacedLister):
        self.classes = classes

    def handles(self, operation: str) -> bool:
        return operation == CREATE

    async def admit(self, attrs: Attributes) -> None:
        claim = attrs.object
        if attrs.group or attrs.resource != "persistentvolumeclaims" or attrs.subresource or \
                not isinstance(claim, dict) or claim_has_class(claim):
            return
        chosen = default_class(await self.classes.list(""))
        if chosen is not None:
            claim.setdefault("spec", {})["storageClassName"] = chosen["metadata"]["name"]
