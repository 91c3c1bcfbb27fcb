"""The core group (/api/v1)."""

from __future__ import annotations

from typing import Any

from ...server.api_group_info import APIGroupInfo
from ...serviceaccount.issuer import TokenConfig
from ...storage.factory import StorageFactory
from . import (  # noqa: F401
    componentstatus,
    configmap,
    endpoints,
    event,
    limitrange,
    namespace,
    node,
    persistentvolume,
    persistentvolumeclaim,
    pod,
    podtemplate,
    replicationcontroller,
    resourcequota,
    secret,
    service,
    serviceaccount,
)
from .service import ServiceNetwork

RESOURCES = (namespace, configmap, secret, event, pod, podtemplate, endpoints, replicationcontroller, serviceaccount,
             resourcequota, limitrange, node, persistentvolume, persistentvolumeclaim, componentstatus)


def new_api_group_info(storage: StorageFactory, network: ServiceNetwork | None = None,
                       tokens: TokenConfig | None = None) -> APIGroupInfo:
    """Services come last: they allocate from `network` and delete their Endpoints with them.
    serviceaccounts/token signs with `tokens` (no token subresource without it)."""
    rest: dict[str, Any] = {}
    for module in RESOURCES:
        rest.update(module.new_rest(storage))
    if tokens is not None:
        rest.update(serviceaccount.token_rest(rest, storage, tokens))
    rest.update(service.new_rest(storage, network, rest["endpoints"], rest["pods"]))
    return APIGroupInfo("", {"v1": rest})
