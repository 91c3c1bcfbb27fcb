"""policy/v1: PodDisruptionBudget (with its status subresource)."""

from __future__ import annotations

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import poddisruptionbudget

GROUP = poddisruptionbudget.GROUP


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    return APIGroupInfo(GROUP, {"v1": poddisruptionbudget.new_rest(storage)})
