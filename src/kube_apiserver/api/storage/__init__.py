"""storage.k8s.io/v1: StorageClass, VolumeAttachment (with status), CSIDriver, CSINode, CSIStorageCapacity,
VolumeAttributesClass."""

from __future__ import annotations

from typing import Any

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import csidriver, csinode, csistoragecapacity, storageclass, volumeattachment, volumeattributesclass
from .common import GROUP

RESOURCES = (storageclass, volumeattachment, csidriver, csinode, csistoragecapacity, volumeattributesclass)


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    rest: dict[str, Any] = {}
    for module in RESOURCES:
        rest.update(module.new_rest(storage))
    return APIGroupInfo(GROUP, {"v1": rest})
