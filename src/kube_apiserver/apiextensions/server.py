"""The apiextensions link of the chain, the last before 404 (apiextensions-apiserver's
CustomResourceDefinitions server): it serves apiextensions.k8s.io and, through its controllers, every
custom resource of an established CRD; what it does not claim goes to its delegate."""

from __future__ import annotations

from ..server.api_group_info import APIGroupInfo
from ..server.config import CompletedConfig
from ..server.generic_api_server import DelegationTarget, GenericAPIServer
from ..storage.factory import StorageFactory
from . import crd
from .controllers import CRDControllers
from .customresource.serving import CustomResourceServing


def new_apiextensions_server(config: CompletedConfig, delegate: DelegationTarget,
                             storage: StorageFactory) -> GenericAPIServer:
    server = config.new("apiextensions-apiserver", delegate)
    storages = crd.new_storage(storage)
    server.install_api_groups(APIGroupInfo(crd.GROUP, {"v1": storages}))
    serving = CustomResourceServing(server, storage)
    controllers = CRDControllers(storages["customresourcedefinitions"], storages["customresourcedefinitions/status"],
                                 serving)
    server.add_post_start_hook("start-apiextensions-controllers", controllers.start)
    server.add_pre_shutdown_hook("stop-apiextensions-controllers", controllers.stop)
    return server
