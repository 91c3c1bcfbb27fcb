"""The core group (/api/v1)."""

from __future__ import annotations

from typing import Any

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import (  # noqa: F401 - proto registers kinds
    configmap,
    endpoints,
    event,
    namespace,
    pod,
    podtemplate,
    proto,
    replicationcontroller,
    secret,
    service,
)
from .service import ServiceNetwork

RESOURCES = (namespace, configmap, secret, event, pod, podtemplate, endpoints, replicationcontroller)


def new_api_group_info(storage: StorageFactory, network: ServiceNetwork | None = None) -> APIGroupInfo:
    """Services come last: they allocate from `network` and delete their Endpoints with them."""
    rest: dict[str, Any] = {}
    for module in RESOURCES:
        rest.update(module.new_rest(storage))
    rest.update(service.new_rest(storage, network, rest["endpoints"]))
    return APIGroupInfo("", {"v1": rest})
