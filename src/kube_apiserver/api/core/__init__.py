"""The core group (/api/v1)."""

from __future__ import annotations

from typing import Any

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import configmap, event, namespace, pod, podtemplate, proto, secret  # noqa: F401 - proto registers kinds

RESOURCES = (namespace, configmap, secret, event, pod, podtemplate)


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    rest: dict[str, Any] = {}
    for module in RESOURCES:
        rest.update(module.new_rest(storage))
    return APIGroupInfo("", {"v1": rest})
